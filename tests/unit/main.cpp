// Owns: the Catch2 main, compiled once and linked into every unit test.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
