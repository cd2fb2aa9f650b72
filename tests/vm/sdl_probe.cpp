// SDL 2's view of the gamepad, for tests/vm/test_gamepad.cpp: prints
// "ready" once SDL is up, then a line per game controller added or removed
// and per button and axis event, with SDL's own names:
//   controller name=<name> type=<xbox360|...> guid=<guid> mapping=<mapping>
//   button a 1
//   axis leftx 32767
//   removed
// It opens every device SDL takes for a game controller; a joystick SDL
// does not map is printed as "joystick <name>". It runs until killed.
#include <SDL2/SDL.h>

#include <cstdio>
#include <cstdlib>

namespace {

const char* type_name(SDL_GameControllerType t) {
  switch (t) {
    case SDL_CONTROLLER_TYPE_XBOX360: return "xbox360";
    case SDL_CONTROLLER_TYPE_XBOXONE: return "xboxone";
    case SDL_CONTROLLER_TYPE_UNKNOWN: return "unknown";
    default: return "other";
  }
}

}  // namespace

int main() {
  // No udev daemon runs in the test's guest: SDL finds /dev/input/event*
  // through inotify instead.
  setenv("SDL_JOYSTICK_DISABLE_UDEV", "1", 0);
  SDL_SetHint(SDL_HINT_JOYSTICK_ALLOW_BACKGROUND_EVENTS, "1");
  if (SDL_Init(SDL_INIT_GAMECONTROLLER) != 0) {
    std::printf("error %s\n", SDL_GetError());
    return 1;
  }
  std::printf("ready\n");
  std::fflush(stdout);
  for (;;) {
    SDL_Event e;
    if (SDL_WaitEventTimeout(&e, 1000) == 0) continue;
    switch (e.type) {
      case SDL_CONTROLLERDEVICEADDED: {
        SDL_GameController* c = SDL_GameControllerOpen(e.cdevice.which);
        if (c == nullptr) {
          std::printf("error %s\n", SDL_GetError());
          break;
        }
        char guid[64];
        SDL_JoystickGetGUIDString(SDL_JoystickGetGUID(SDL_GameControllerGetJoystick(c)), guid,
                                  sizeof guid);
        char* mapping = SDL_GameControllerMapping(c);
        std::printf("controller name=%s type=%s guid=%s mapping=%s\n",
                    SDL_GameControllerName(c), type_name(SDL_GameControllerGetType(c)), guid,
                    mapping != nullptr ? mapping : "");
        SDL_free(mapping);
        break;
      }
      case SDL_JOYDEVICEADDED:
        if (!SDL_IsGameController(e.jdevice.which)) {
          std::printf("joystick %s\n", SDL_JoystickNameForIndex(e.jdevice.which));
        }
        break;
      case SDL_CONTROLLERDEVICEREMOVED: std::printf("removed\n"); break;
      case SDL_CONTROLLERBUTTONDOWN:
      case SDL_CONTROLLERBUTTONUP:
        std::printf("button %s %d\n",
                    SDL_GameControllerGetStringForButton(SDL_GameControllerButton(e.cbutton.button)),
                    e.cbutton.state == SDL_PRESSED ? 1 : 0);
        break;
      case SDL_CONTROLLERAXISMOTION:
        std::printf("axis %s %d\n",
                    SDL_GameControllerGetStringForAxis(SDL_GameControllerAxis(e.caxis.axis)),
                    int(e.caxis.value));
        break;
      default: break;
    }
    std::fflush(stdout);
  }
}
