// PortCalendar: bookings made out of arrival order take the gaps before later bookings;
// in arrival order it is the single server it replaced (start = max(arrival, free)).
#include <catch2/catch.hpp>

#include "mem/cache/port_calendar.h"

using fusim::Tick;
using fusim::cache::PortCalendar;

TEST_CASE("a port calendar booked in arrival order is one server") {
  PortCalendar p;
  CHECK(p.book(0, 10, 0) == 0);    // [0, 10)
  CHECK(p.book(5, 10, 0) == 10);   // queued: [10, 20)
  CHECK(p.book(20, 10, 0) == 20);  // just free: [20, 30)
  CHECK(p.book(45, 10, 0) == 45);  // idle port: [45, 55)
  CHECK(p.free_at() == 55);
  CHECK(p.book(50, 0, 0) == 55);  // no occupancy still waits for the port
}

TEST_CASE("a booking for an earlier arrival takes the first gap long enough") {
  PortCalendar p;
  CHECK(p.book(100, 10, 0) == 100);  // [100, 110), booked first
  CHECK(p.book(50, 10, 0) == 50);    // arrives earlier: served at once (one free-at time: 110)
  CHECK(p.book(95, 10, 0) == 110);   // [95, 105) overlaps 100: after it
  CHECK(p.book(60, 40, 0) == 60);    // exactly the gap [60, 100): joins both neighbours
  CHECK(p.book(55, 5, 0) == 120);    // [50, 120) is one busy stretch now
  CHECK(p.book(10, 45, 0) == 125);   // [10, 50) is 5 too short: after the stretch
  CHECK(p.book(0, 50, 0) == 0);      // [0, 50) fits exactly
  CHECK(p.free_at() == 170);
}

TEST_CASE("a port calendar stays exact as it forgets what ended before now") {
  PortCalendar p;
  // 1000 stretches [20t, 20t + 10), each booked at its arrival (those before now forgotten).
  for (Tick t = 0; t < 1000; ++t) CHECK(p.book(20 * t, 10, 20 * t) == 20 * t);
  CHECK(p.book(19990, 10, 19985) == 19990);  // right after [19980, 19990): [19980, 20000)
  CHECK(p.book(19985, 5, 19985) == 20000);   // inside that stretch: after it
  CHECK(p.free_at() == 20005);
}
