// What an issue or note on a window's energy is about: a stable code beside its text, so code can
// tell issues apart without matching words that may be reworded. The text is what is printed and
// stored; the code is kept in memory only.
#pragma once
#include <cstdint>
#include <string_view>

namespace wattlab {

enum class IssueCode : uint8_t {
  device_lost,                // the domain was lost during the window: no energy after that
  sources_disagree,           // the primary estimate and its cross-check differ beyond their tolerance
  counter_not_published,      // the counter has not yet published past the window's end
  counter_not_held,           // the timeline does not hold the energy counter around the edges
  no_estimate,                // no counter or power readings cover the window
  shorter_than_update,        // the window is shorter than the counter's update period
  reading_failed,             // reads of an energy or power reading failed during the window
  counter_reset,              // the counter went back; that step was bridged with integrated power
  capped_share_from_reasons,  // a capped share comes from the clock-event reasons, not a violation counter
  provisional,                // the timeline does not cover the window's end yet
  shorter_than_average,       // averaged power only: the window is too short for it (U95 above its energy)
  average_gap,                // averaged power only: its readings are missing around the window
};

std::string_view to_string(IssueCode code);

}  // namespace wattlab
