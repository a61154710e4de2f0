"""The one error type of the capture: bad input or a model fusim cannot represent."""


class CaptureError(Exception):
    """Raised with a message naming the fx node (or argument) at fault; the CLI exits 2."""


def one_line(error):
    """`Type: first line of the message` of any exception, for a one-line CaptureError."""
    text = str(error).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(error).__name__}: {first}" if first else type(error).__name__
