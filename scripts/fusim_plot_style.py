"""What every fusim plot shares (issue 23, point 4), so that figures read alike:

- the orderings in the order of the pipeline (eager, backward-fused, forward-fused, mixed),
  one colour each, the same in every plot;
- a title and a subtitle with the fixed context: trace, machine, optimizer and the values
  pinned by --set, read from the provenance lines `scripts/gallery.sh` writes at the top
  of each CSV ("# fusim COMMIT" and "# command: fusim sweep ..."), or from the rows;
- numbers without matplotlib's offset ("+1" under a colour bar of cells all reading "1").

Imported by the plot scripts of this folder (they run as /usr/bin/python3 scripts/X.py, so
this folder is on sys.path).
"""
import math
import shlex

ORDERINGS = ("eager", "backward-fused", "forward-fused", "mixed")
# matplotlib's tab10 blue, orange, green, purple: distinguishable in greyscale order too.
COLOURS = {"eager": "#1f77b4", "backward-fused": "#ff7f0e", "forward-fused": "#2ca02c",
           "mixed": "#9467bd"}


def ordering_key(name):
    """Sort key: the pipeline's order, unknown names after it, alphabetically."""
    return (ORDERINGS.index(name), "") if name in ORDERINGS else (len(ORDERINGS), str(name))


def ordering_colour(name):
    return COLOURS.get(name)


def split_provenance(lines):
    """(provenance, data lines): the leading '# key: value' / '# fusim ...' lines apart."""
    provenance = {}
    k = 0
    while k < len(lines) and lines[k].startswith("#"):
        text = lines[k][1:].strip()
        if text.startswith("command:"):
            provenance["command"] = text[len("command:"):].strip()
        elif text.startswith("fusim "):
            provenance["commit"] = text[len("fusim "):].strip()
        elif ":" in text:
            key, value = text.split(":", 1)
            provenance[key.strip()] = value.strip()
        k += 1
    return provenance, lines[k:]


def command_context(command):
    """The fixed context a fusim command line names: [(what, value)], in reading order.
    --set values with one value are pinned (a comma list is a swept axis, not context)."""
    words = []
    for word in shlex.split(command or ""):
        words.extend(word.split("=", 1) if word.startswith("--") and "=" in word else [word])
    wanted = {"--trace": "trace", "--machine": "machine", "--optimizer": "optimizer",
              "--impl": "impl", "--batch": "batch", "--fidelity": "fidelity",
              "--steps": "steps"}
    out = []
    for option, value in zip(words, words[1:]):
        if option in wanted:
            out.append((wanted[option], value))
        elif option == "--set":
            path, _, values = value.partition("=")
            if values and "," not in values:
                out.append((path, values))
    return out


def subtitle_text(pairs, extra=()):
    """'trace mlp, machine xeon-8380-ddr4, optimizer adam, caches.LLC.size=12MiB'."""
    parts = []
    for what, value in pairs:
        if "." in what:  # a machine field pinned by --set
            parts.append(f"{what}={value}")
        else:
            parts.append(f"{what} {value}")
    parts.extend(extra)
    return ", ".join(parts)


def set_titles(fig, title, subtitle):
    """Title and, below it, the fixed context in smaller type."""
    if title:
        fig.suptitle(title, fontsize="large", y=0.995)
    if subtitle:
        fig.text(0.5, 0.935 if title else 0.97, subtitle, ha="center", va="top",
                 fontsize="small", color="0.25", wrap=True)


def plain_numbers(axis):
    """No offset or scientific notation on a linear axis (the values as they are)."""
    try:
        axis.get_major_formatter().set_useOffset(False)
        axis.get_major_formatter().set_scientific(False)
    except AttributeError:  # a custom formatter has neither
        pass


def cell_digits(values, most=4):
    """Decimals for heatmap cells: enough to tell different values apart, but no more than
    resolve a 50th of the range (cells stay readable: a 10x10 grid of hit rates 42-100%
    reads "42", "54", not "42.0616"), at most `most`."""
    finite = [v for v in values if v == v]
    if not finite:
        return 0
    span = max(finite) - min(finite)
    resolve = most if span == 0 else max(0, math.ceil(-math.log10(span / 50)))
    return min(distinct_digits(finite, most), resolve, most)


def distinct_digits(values, most=6):
    """Fewest decimals (0..most) with which different values read differently."""
    values = sorted(set(values))
    for d in range(most + 1):
        texts = [f"{v:.{d}f}" for v in values]
        if len(set(texts)) == len(texts):
            return d
    return most
