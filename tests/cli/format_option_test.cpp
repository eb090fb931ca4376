// The --format convention (src/cli/format_option.h) on a bare CLI11 app: defaults, --json as the
// shorthand, formats a command lacks, and the messages that name them.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include "cli/format_option.h"

namespace {

using wattlab::cli::FormatChoice;
using wattlab::report::Format;

struct Parsed {
  bool ok = false;
  FormatChoice choice;
  std::string error;  // CLI11's message when !ok
  std::string help;   // the subcommand's --help
};

// Parses `wattlab show ARGS` where `show` has the formats `allowed`.
Parsed parse(const std::vector<std::string>& args, const std::vector<Format>& allowed) {
  CLI::App app{"test", "wattlab"};
  auto* show = app.add_subcommand("show", "a report");
  Parsed p;
  wattlab::cli::add_format_option(show, p.choice, allowed, "a note");
  p.help = show->help();
  std::vector<std::string> rev{args.rbegin(), args.rend()};
  rev.push_back("show");
  try {
    app.parse(rev);
    p.ok = true;
  } catch (const CLI::ParseError& e) {
    p.error = e.what();
  }
  return p;
}

const std::vector<Format> kTextJson{Format::text, Format::json};

TEST(FormatOption, DefaultIsTheChoicesInitialValue) {
  const auto p = parse({}, kTextJson);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.choice.format, Format::text);
  EXPECT_FALSE(p.choice.given);
  EXPECT_NE(p.help.find("output format: text or json (default text); a note"), std::string::npos) << p.help;
  EXPECT_NE(p.help.find("--json"), std::string::npos);
}

TEST(FormatOption, FormatAndJsonShorthand) {
  for (const auto& args : {std::vector<std::string>{"--json"}, {"--format", "json"}, {"--format=json"},
                           {"--json", "--format", "json"}, {"--format", "json", "--json"}}) {
    const auto p = parse(args, kTextJson);
    ASSERT_TRUE(p.ok) << args.front() << ": " << p.error;
    EXPECT_EQ(p.choice.format, Format::json);
    EXPECT_TRUE(p.choice.given);
  }
  const auto md = parse({"--format", "md"}, {Format::text, Format::markdown, Format::html});
  ASSERT_TRUE(md.ok) << md.error;
  EXPECT_EQ(md.choice.format, Format::markdown);
}

TEST(FormatOption, UnknownOrMissingFormatNamesTheValueAndTheAccepted) {
  const auto xml = parse({"--format", "xml"}, kTextJson);
  EXPECT_FALSE(xml.ok);
  EXPECT_EQ(xml.error, "--format: 'xml' is not a format of 'show'; give text or json");
  const auto md = parse({"--format", "md"}, kTextJson);  // a real format this command lacks
  EXPECT_FALSE(md.ok);
  EXPECT_EQ(md.error, "--format: 'md' is not a format of 'show'; give text or json");
}

TEST(FormatOption, JsonContradictingFormatIsAnError) {
  for (const auto& args : {std::vector<std::string>{"--json", "--format", "text"}, {"--format", "text", "--json"}}) {
    const auto p = parse(args, kTextJson);
    EXPECT_FALSE(p.ok);
    EXPECT_EQ(p.error, "--format: 'text' contradicts --json (short for --format json); give one");
  }
}

TEST(FormatOption, NoJsonShorthandWithoutJson) {
  const auto p = parse({"--json"}, {Format::text, Format::markdown});
  EXPECT_FALSE(p.ok);
  EXPECT_EQ(p.help.find("--json"), std::string::npos);
}

TEST(FormatOption, FormatList) {
  EXPECT_EQ(wattlab::cli::format_list({Format::text}), "text");
  EXPECT_EQ(wattlab::cli::format_list(kTextJson), "text or json");
  EXPECT_EQ(wattlab::cli::format_list({Format::text, Format::json, Format::markdown, Format::html}), "text, json, md or html");
}

}  // namespace
