#include "core/suggest.h"

#include <algorithm>
#include <cctype>

namespace fusim {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Optimal string alignment distance (Damerau-Levenshtein without repeated edits of a
// substring): the typo model of "did you mean" in git and cargo.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

}  // namespace

std::optional<std::string> closest_name(const std::string& word,
                                        const std::vector<std::string>& candidates) {
  if (word.empty() || candidates.empty()) return std::nullopt;
  const std::string w = lower(word);
  const std::size_t allowed = w.size() <= 4 ? 1 : w.size() <= 8 ? 2 : 3;
  std::optional<std::string> best;
  std::size_t best_distance = allowed + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(w, lower(c));
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  if (best) return best;
  std::optional<std::string> prefixed;
  for (const auto& c : candidates)
    if (lower(c).rfind(w, 0) == 0) {
      if (prefixed) return std::nullopt;  // ambiguous: "r" of resnet18 and resnet50
      prefixed = c;
    }
  return prefixed;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const auto name = closest_name(word, candidates);
  return name ? " (did you mean \"" + *name + "\"?)" : "";
}

}  // namespace fusim
