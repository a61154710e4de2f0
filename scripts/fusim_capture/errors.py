"""The one error type of the capture: bad input or a model fusim cannot represent."""


class CaptureError(Exception):
    """Raised with a message naming the fx node (or argument) at fault; the CLI exits 2."""
