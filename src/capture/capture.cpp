#include "capture/capture.h"

#include <memory>

#include "capture/png.h"
#include "capture/scale.h"
#include "core/json_writer.h"
#include "util/save_file.h"

namespace cu {
namespace {

// Encodes the frame scaled to out_size and wraps it as an image result.
tool_result finish(const frame& f, size2 out_size, bool save, const std::string& save_dir,
                   const char* prefix, task_runner& runner,
                   const std::array<int, 4>* region = nullptr) {
  // Each strip of the encode gets its own scaler (its scratch row); the
  // frame itself is only read.
  auto make_filler = [&]() -> row_filler {
    auto scaler = std::make_shared<area_scaler>(f.area.w, f.area.h, out_size.w, out_size.h,
                                                f.layout);
    return [scaler, &f](int y, uint8_t* row) { scaler->row(f.data, f.stride, y, row); };
  };
  auto png = encode_png_rgb_parallel(out_size.w, out_size.h, make_filler, runner);
  if (!png) return tool_result::failure(png.err().message);
  std::string saved;
  std::string save_error;
  if (save) {
    auto path = save_png_file(save_dir, prefix, png->data.get(), png->size);
    if (path) {
      saved = std::move(*path);
    } else {
      save_error = path.err().message;
    }
  }
  tool_result r;
  r.add_image(std::move(*png));
  if (!save_error.empty()) {
    // The capture itself worked: the model still gets the image, and an
    // error block says the file was not written.
    r.is_error = true;
    r.add_text("save_to_disk failed (the image above was captured, but not saved): " +
               save_error);
  } else if (save) {
    r.add_text("Saved to disk: " + saved);
  }
  // The geometry, for clients that read structuredContent.
  json_writer j(r.structured);
  j.begin_object().key("image").begin_object().key("width").number(int64_t(out_size.w));
  j.key("height").number(int64_t(out_size.h)).end_object();
  j.key("device").begin_object().key("x").number(int64_t(f.area.x));
  j.key("y").number(int64_t(f.area.y)).key("width").number(int64_t(f.area.w));
  j.key("height").number(int64_t(f.area.h)).end_object();
  j.key("scale").number(double(f.area.w) / double(out_size.w));
  if (region != nullptr) {
    j.key("region").begin_array();
    for (int v : *region) j.number(int64_t(v));
    j.end_array();
  }
  if (!saved.empty()) j.key("saved_to").string(saved);
  j.end_object();
  return r;
}

}  // namespace

tool_result run_capture(grabber& g, const capture_job& job, const std::string& save_dir,
                        task_runner& runner, std::optional<coord_session>* established) {
  auto screen = g.screen_rect();
  if (!screen) return tool_result::failure(screen.err().message);
  // Which screen a session made now belongs to.
  auto stamp = [&](coord_session s) {
    s.generation = g.generation();
    s.root = size2{screen->w, screen->h};
    return s;
  };

  if (job.what == capture_job::kind::screenshot) {
    rect area = job.area ? intersect(*job.area, *screen) : *screen;
    if (area.w == 0) return tool_result::failure("the selected display area is not on screen");
    coord_session session = stamp(make_session(area));
    auto f = g.grab(area);
    if (!f) return tool_result::failure(f.err().message);
    tool_result r = finish(*f, session.image, job.save_to_disk, save_dir, "screenshot", runner);
    // The model sees the image whenever there is one (a failed save_to_disk
    // included), so coordinates refer to it from now on.
    if (r.has_image()) *established = session;
    return r;
  }

  coord_session session;
  if (job.session) {
    session = *job.session;
    if (session.generation != g.generation()) {
      return tool_result::failure(
          "no screenshot session yet: the X server restarted after the screenshot this "
          "region refers to; take a new screenshot");
    }
  } else {
    session = stamp(make_session(job.area ? intersect(*job.area, *screen) : *screen));
    *established = session;
  }
  auto device = region_to_device(session, job.region);
  if (!device) return tool_result::failure("Invalid argument \"region\": " + device.err().message);
  // The screen may have shrunk since the session was made.
  rect area = intersect(*device, *screen);
  if (area.w == 0) return tool_result::failure("the zoom region is no longer on screen");
  auto f = g.grab(area);
  if (!f) return tool_result::failure(f.err().message);
  return finish(*f, {area.w, area.h}, job.save_to_disk, save_dir, "zoom", runner, &job.region);
}

}  // namespace cu
