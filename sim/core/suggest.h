#pragma once
// "Did you mean ...?" for a mistyped name (a command, an option, a preset, a zoo network, an
// optimizer, an ordering), one rule for every error message that lists what was expected.
#include <optional>
#include <string>
#include <vector>

namespace fusim {

// The candidate nearest to `word` by edit distance (insertions, deletions, substitutions
// and swaps of two adjacent characters, case-insensitive), when it is near enough to be a
// typo: at most 1 edit for words of up to 4 characters, 2 up to 8, 3 beyond; else a
// candidate that `word` is the start of ("sim" -> "simulate"), when only one is. Ties go to
// the first in `candidates`.
std::optional<std::string> closest_name(const std::string& word,
                                        const std::vector<std::string>& candidates);

// " (did you mean \"simulate\"?)" for closest_name, else "": the end of a message that
// says what was expected ("unknown command ...: expected one of ... (did you mean ...?)").
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace fusim
