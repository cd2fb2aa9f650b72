"""An X client of the benchmarks' own, through libxcb with ctypes: windows it
fills with colours or puts whole images into, each change finished by a
round trip, so the X server has drawn it when the call returns.

Standard library only (libxcb1 comes with every X client).
"""
import ctypes

_xcb = ctypes.CDLL("libxcb.so.1")
_xcb.xcb_connect.restype = ctypes.c_void_p
_xcb.xcb_connect.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
_xcb.xcb_connection_has_error.argtypes = [ctypes.c_void_p]
_xcb.xcb_disconnect.argtypes = [ctypes.c_void_p]
_xcb.xcb_get_setup.restype = ctypes.c_void_p
_xcb.xcb_get_setup.argtypes = [ctypes.c_void_p]
_xcb.xcb_generate_id.argtypes = [ctypes.c_void_p]
_xcb.xcb_get_maximum_request_length.argtypes = [ctypes.c_void_p]
_xcb.xcb_create_window.argtypes = [ctypes.c_void_p, ctypes.c_uint8, ctypes.c_uint32,
                                   ctypes.c_uint32, ctypes.c_int16, ctypes.c_int16,
                                   ctypes.c_uint16, ctypes.c_uint16, ctypes.c_uint16,
                                   ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint32,
                                   ctypes.POINTER(ctypes.c_uint32)]
_xcb.xcb_map_window.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
_xcb.xcb_unmap_window.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
_xcb.xcb_create_gc.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32,
                               ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32)]
_xcb.xcb_change_gc.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32,
                               ctypes.POINTER(ctypes.c_uint32)]
_xcb.xcb_poly_fill_rectangle.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32,
                                         ctypes.c_uint32, ctypes.POINTER(ctypes.c_int16)]
_xcb.xcb_put_image.argtypes = [ctypes.c_void_p, ctypes.c_uint8, ctypes.c_uint32,
                               ctypes.c_uint32, ctypes.c_uint16, ctypes.c_uint16,
                               ctypes.c_int16, ctypes.c_int16, ctypes.c_uint8, ctypes.c_uint8,
                               ctypes.c_uint32, ctypes.c_char_p]
_xcb.xcb_get_input_focus.restype = ctypes.c_uint
_xcb.xcb_get_input_focus.argtypes = [ctypes.c_void_p]
_xcb.xcb_get_input_focus_reply.restype = ctypes.c_void_p
_xcb.xcb_get_input_focus_reply.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_void_p]
_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]

_CW_BACK_PIXEL = 2
_CW_OVERRIDE_REDIRECT = 512
_GC_FOREGROUND = 4
_Z_PIXMAP = 2


class XPainter:
    """Override-redirect windows on display, drawn on request."""

    def __init__(self, display):
        screen = ctypes.c_int(0)
        self.conn = _xcb.xcb_connect(display.encode(), ctypes.byref(screen))
        if not self.conn or _xcb.xcb_connection_has_error(self.conn):
            raise RuntimeError(f"cannot connect to X display {display}")
        # The first screen follows the 40-byte setup header, the vendor
        # string and the pixmap formats: root, default colormap, white and
        # black pixels, input masks, size, ..., root visual at 32, depth 38.
        setup = _xcb.xcb_get_setup(self.conn)
        raw = ctypes.cast(setup, ctypes.POINTER(ctypes.c_uint8))
        vendor_len = raw[24] | raw[25] << 8
        offset = 40 + (vendor_len + 3) // 4 * 4 + raw[29] * 8
        words = ctypes.cast(setup + offset, ctypes.POINTER(ctypes.c_uint32))
        self.root = words[0]
        self.visual = words[8]
        self.depth = raw[offset + 38]
        # Longest request, in bytes (BIG-REQUESTS included).
        self.max_request = _xcb.xcb_get_maximum_request_length(self.conn) * 4

    def window(self, x, y, width, height, rgb=(0, 0, 0)):
        """Map an override-redirect window filled with rgb; return its id."""
        wid = _xcb.xcb_generate_id(self.conn)
        values = (ctypes.c_uint32 * 2)(self._pixel(rgb), 1)
        _xcb.xcb_create_window(self.conn, 0, wid, self.root, x, y, width, height, 0, 1,
                               self.visual, _CW_BACK_PIXEL | _CW_OVERRIDE_REDIRECT, values)
        _xcb.xcb_map_window(self.conn, wid)
        self.gc = getattr(self, "gc", None) or self._make_gc(wid)
        self.sync()
        return wid

    def fill(self, wid, x, y, width, height, rgb):
        """Fill a rectangle of window wid with rgb, and wait until it is drawn."""
        values = (ctypes.c_uint32 * 1)(self._pixel(rgb))
        _xcb.xcb_change_gc(self.conn, self.gc, _GC_FOREGROUND, values)
        rect = (ctypes.c_int16 * 4)(x, y, width, height)
        _xcb.xcb_poly_fill_rectangle(self.conn, wid, self.gc, 1, rect)
        self.sync()

    def put_bgrx(self, wid, width, height, pixels):
        """Put a whole width x height image of 4-byte BGRX pixels into window wid."""
        stride = width * 4
        band = max(1, (self.max_request - 64) // stride)
        for y in range(0, height, band):
            rows = min(band, height - y)
            chunk = pixels[y * stride:(y + rows) * stride]
            _xcb.xcb_put_image(self.conn, _Z_PIXMAP, wid, self.gc, width, rows, 0, y, 0,
                               self.depth, len(chunk), chunk)
        self.sync()

    def map(self, wid, shown):
        """Map or unmap window wid, and wait until the server has done it."""
        (_xcb.xcb_map_window if shown else _xcb.xcb_unmap_window)(self.conn, wid)
        self.sync()

    def sync(self):
        """A round trip: every request before it has been carried out."""
        reply = _xcb.xcb_get_input_focus_reply(self.conn, _xcb.xcb_get_input_focus(self.conn),
                                               None)
        if not reply:
            raise RuntimeError("lost the X connection")
        _libc.free(reply)

    def close(self):
        _xcb.xcb_disconnect(self.conn)

    def _make_gc(self, wid):
        gc = _xcb.xcb_generate_id(self.conn)
        _xcb.xcb_create_gc(self.conn, gc, wid, 0, None)
        return gc

    @staticmethod
    def _pixel(rgb):
        return rgb[0] << 16 | rgb[1] << 8 | rgb[2]
