// Tests for src/protocol/frame_splitter.h: how a byte stream becomes frames,
// whatever the read boundaries.
#include "protocol/frame_splitter.h"

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace {

// What a splitter produced: the frames in order and how many oversize lines
// it reported, with the frame count at each report.
struct outcome {
  std::vector<std::string> frames;
  std::vector<size_t> oversize_at;
};

// Feeds each chunk in turn, then finishes the stream.
outcome run(cu::frame_splitter& s, const std::vector<std::string>& chunks) {
  outcome o;
  auto on_frame = [&](std::string_view f) { o.frames.emplace_back(f); };
  auto on_oversize = [&] { o.oversize_at.push_back(o.frames.size()); };
  for (const std::string& c : chunks) s.feed(c.data(), c.size(), on_frame, on_oversize);
  s.finish(on_frame);
  return o;
}

outcome run(size_t max_frame, const std::vector<std::string>& chunks) {
  cu::frame_splitter s(max_frame);
  return run(s, chunks);
}

// The stream cut into pieces of at most n bytes.
std::vector<std::string> chunked(const std::string& stream, size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < stream.size(); i += n) out.push_back(stream.substr(i, n));
  return out;
}

using strings = std::vector<std::string>;

}  // namespace

TEST_CASE("a frame split across two reads is joined at every split position") {
  const std::string stream = "{\"id\":1}\n{\"id\":22}\n";
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    CAPTURE(cut);
    outcome o = run(1024, {stream.substr(0, cut), stream.substr(cut)});
    CHECK(o.frames == strings{"{\"id\":1}", "{\"id\":22}"});
    CHECK(o.oversize_at.empty());
  }
}

TEST_CASE("a frame split across three reads is joined at every pair of split positions") {
  const std::string stream = "abc\r\ndefgh\n\nij\n";
  for (size_t a = 0; a <= stream.size(); ++a) {
    for (size_t b = a; b <= stream.size(); ++b) {
      CAPTURE(a, b);
      outcome o = run(64, {stream.substr(0, a), stream.substr(a, b - a), stream.substr(b)});
      CHECK(o.frames == strings{"abc", "defgh", "ij"});
    }
  }
}

TEST_CASE("a stream fed one byte at a time yields the same frames") {
  const std::string stream = "first\nsecond\r\nthird\n";
  outcome o = run(64, chunked(stream, 1));
  CHECK(o.frames == strings{"first", "second", "third"});
}

TEST_CASE("many frames in one read are all yielded in order") {
  std::string stream;
  strings expected;
  for (int i = 0; i < 100; ++i) {
    expected.push_back("frame " + std::to_string(i));
    stream += expected.back() + "\n";
  }
  cu::frame_splitter s(64);
  outcome o = run(s, {stream});
  CHECK(o.frames == expected);
  CHECK(s.buffered() == 0);
}

TEST_CASE("a carriage return before the newline is dropped") {
  outcome o = run(64, {"one\r\ntwo\r\n"});
  CHECK(o.frames == strings{"one", "two"});
}

TEST_CASE("a carriage return split from its newline is still dropped") {
  outcome o = run(64, {"one\r", "\ntwo\r", "\n"});
  CHECK(o.frames == strings{"one", "two"});
}

TEST_CASE("a carriage return inside a frame is kept") {
  outcome o = run(64, {"a\rb\n"});
  CHECK(o.frames == strings{"a\rb"});
}

TEST_CASE("blank lines are skipped") {
  outcome o = run(64, {"\n\n  \n\t\n\r\none\n\n \r\ntwo\n"});
  CHECK(o.frames == strings{"one", "two"});
}

TEST_CASE("leading whitespace in a frame that has content is kept") {
  outcome o = run(64, {"  {}\n"});
  CHECK(o.frames == strings{"  {}"});
}

TEST_CASE("a trailing frame without a newline is yielded by finish") {
  cu::frame_splitter s(64);
  strings frames;
  auto on_frame = [&](std::string_view f) { frames.emplace_back(f); };
  auto on_oversize = [] { FAIL("no line is oversized"); };
  const std::string data = "one\ntwo";
  s.feed(data.data(), data.size(), on_frame, on_oversize);
  CHECK(frames == strings{"one"});
  CHECK(s.buffered() == 3);
  s.finish(on_frame);
  CHECK(frames == strings{"one", "two"});
  CHECK(s.buffered() == 0);
}

TEST_CASE("finish yields nothing when the stream ended with a newline or was empty") {
  CHECK(run(64, {}).frames.empty());
  CHECK(run(64, {""}).frames.empty());
  CHECK(run(64, {"one\n"}).frames == strings{"one"});
  CHECK(run(64, {"one\n\r"}).frames == strings{"one"});
}

TEST_CASE("a line exactly at the limit is accepted") {
  const std::string line(16, 'x');
  SECTION("in one read") {
    outcome o = run(16, {line + "\n"});
    CHECK(o.frames == strings{line});
    CHECK(o.oversize_at.empty());
  }
  SECTION("one byte at a time") {
    outcome o = run(16, chunked(line + "\n", 1));
    CHECK(o.frames == strings{line});
    CHECK(o.oversize_at.empty());
  }
  SECTION("as the unterminated last line") {
    outcome o = run(16, {line});
    CHECK(o.frames == strings{line});
    CHECK(o.oversize_at.empty());
  }
}

TEST_CASE("an oversize line is reported once and the next line is still yielded") {
  const std::string big(17, 'x');
  SECTION("when its newline arrives in the same chunk") {
    outcome o = run(16, {"before\n" + big + "\nafter\n"});
    CHECK(o.frames == strings{"before", "after"});
    CHECK(o.oversize_at == std::vector<size_t>{1});
  }
  SECTION("when it arrives across many chunks") {
    const std::string huge(1000, 'y');
    outcome o = run(16, chunked("before\n" + huge + "\nafter\n", 7));
    CHECK(o.frames == strings{"before", "after"});
    CHECK(o.oversize_at == std::vector<size_t>{1});
  }
  SECTION("when it arrives one byte at a time") {
    outcome o = run(16, chunked(big + "\nafter\n", 1));
    CHECK(o.frames == strings{"after"});
    CHECK(o.oversize_at == std::vector<size_t>{0});
  }
  SECTION("when its newline arrives alone in the next chunk") {
    outcome o = run(16, {big, "\n", "after\n"});
    CHECK(o.frames == strings{"after"});
    CHECK(o.oversize_at == std::vector<size_t>{0});
  }
  SECTION("when the next line starts in the chunk that holds its newline") {
    outcome o = run(16, {"12345678", "9012345678", "90\nafter", "\n"});
    CHECK(o.frames == strings{"after"});
    CHECK(o.oversize_at == std::vector<size_t>{0});
  }
  SECTION("when two oversize lines follow each other, each is reported") {
    outcome o = run(16, {big + "\n" + big + "\nafter\n"});
    CHECK(o.frames == strings{"after"});
    CHECK(o.oversize_at == std::vector<size_t>{0, 0});
  }
}

TEST_CASE("an oversize line is reported as soon as the limit is passed") {
  cu::frame_splitter s(16);
  int reports = 0;
  auto on_frame = [](std::string_view) { FAIL("no frame is complete"); };
  auto on_oversize = [&] { ++reports; };
  const std::string part(10, 'z');
  s.feed(part.data(), part.size(), on_frame, on_oversize);
  CHECK(reports == 0);
  s.feed(part.data(), part.size(), on_frame, on_oversize);
  CHECK(reports == 1);
  CHECK(s.buffered() == 0);
  s.feed(part.data(), part.size(), on_frame, on_oversize);
  CHECK(reports == 1);
}

TEST_CASE("an unterminated oversize last line is not yielded by finish") {
  outcome o = run(16, {"ok\n", std::string(40, 'x')});
  CHECK(o.frames == strings{"ok"});
  CHECK(o.oversize_at == std::vector<size_t>{1});
}

TEST_CASE("every chunk size of a mixed stream gives the same frames and reports") {
  const std::string big(50, 'q');
  const std::string stream = "alpha\r\n\n" + big + "\nbeta\n" + std::string(16, 'm') + "\ngamma";
  const strings expected{"alpha", "beta", std::string(16, 'm'), "gamma"};
  for (size_t n = 1; n <= stream.size(); ++n) {
    CAPTURE(n);
    outcome o = run(16, chunked(stream, n));
    CHECK(o.frames == expected);
    CHECK(o.oversize_at == std::vector<size_t>{1});
  }
}

TEST_CASE("a frame handler that says stop ends the feed right after its frame") {
  cu::frame_splitter s(1024);
  std::vector<std::string> frames;
  const std::string chunk = "one\ntwo\nthree\nfou";
  auto stop_after_two = [&](std::string_view f) {
    frames.emplace_back(f);
    return f != "two";
  };
  auto never = [] { FAIL("no frame is oversized"); };
  size_t used = s.feed(chunk.data(), chunk.size(), stop_after_two, never);
  CHECK(used == 8);  // "one\ntwo\n"
  CHECK(frames == std::vector<std::string>{"one", "two"});
  // The rest, fed again later, goes on where it stopped.
  used += s.feed(chunk.data() + used, chunk.size() - used, stop_after_two, never);
  CHECK(used == chunk.size());
  const std::string more = "r\n";
  s.feed(more.data(), more.size(), stop_after_two, never);
  CHECK(frames == std::vector<std::string>{"one", "two", "three", "four"});
}

TEST_CASE("stopping on a frame that was joined from pieces keeps the rest") {
  cu::frame_splitter s(1024);
  std::vector<std::string> frames;
  auto stop = [&](std::string_view f) {
    frames.emplace_back(f);
    return false;
  };
  auto never = [] { FAIL("no frame is oversized"); };
  const std::string a = "hel", b = "lo\nnext\n";
  CHECK(s.feed(a.data(), a.size(), stop, never) == 3);
  CHECK(s.feed(b.data(), b.size(), stop, never) == 3);
  CHECK(frames == std::vector<std::string>{"hello"});
  CHECK(s.buffered() == 0);
}

TEST_CASE("a frame joined from pieces has the padding after it, one from a single chunk not") {
  cu::frame_splitter s(1024, 64);
  std::vector<std::pair<std::string, bool>> frames;
  std::vector<size_t> spare;
  auto on_frame = [&](std::string_view f, bool padded) {
    frames.emplace_back(f, padded);
    if (padded) spare.push_back(s.buffer_capacity() - s.buffered());
  };
  auto never = [] { FAIL("no frame is oversized"); };
  const std::string a = "whole\nspl", b = "it\n";
  s.feed(a.data(), a.size(), on_frame, never);
  s.feed(b.data(), b.size(), on_frame, never);
  CHECK(frames == std::vector<std::pair<std::string, bool>>{{"whole", false}, {"split", true}});
  REQUIRE(spare.size() == 1);
  CHECK(spare[0] >= 64);
}

TEST_CASE("the buffer a long line needed is freed once the line is yielded") {
  const size_t long_line = cu::frame_splitter::kKeepBytes * 4;
  cu::frame_splitter s(long_line * 2);
  size_t frames = 0;
  auto on_frame = [&](std::string_view f) { frames += f.size() == long_line ? 1 : 0; };
  auto never = [] { FAIL("no frame is oversized"); };
  const std::string piece(long_line / 8, 'x');
  for (int i = 0; i < 8; ++i) s.feed(piece.data(), piece.size(), on_frame, never);
  CHECK(s.buffer_capacity() >= long_line);
  s.feed("\n", 1, on_frame, never);
  CHECK(frames == 1);
  CHECK(s.buffer_capacity() <= cu::frame_splitter::kKeepBytes);
}
