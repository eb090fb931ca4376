// main only forwards the arguments; everything else is in wattlab_cli, which the tests link.
#include <iostream>
#include <string_view>
#include <vector>

#include "cli.h"

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  wattlab::cli::Io io{std::cout, std::cerr};
  return wattlab::cli::run(args, io);
}
