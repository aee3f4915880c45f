"""Compare: many Measurements as one table per label, laid out as torch's
(rows: num_threads, env and sub_label or stmt; columns: description; cells:
medians in one unit), with optional significant-figure trimming, colouring
and variance warnings."""
import collections
import enum
import math

from cthtorch.utils.benchmark.utils import common

__all__ = ["Colorize", "Compare"]

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


class _Column:
    """Formats one column's medians with a shared width and number of decimals."""

    def __init__(self, grouped_results, time_scale, trim_significant_figures, highlight_warnings):
        self.grouped_results = grouped_results
        flat = [r for group in grouped_results for r in group]
        self._trim = trim_significant_figures
        self._highlight = highlight_warnings and any(r.has_warnings for r in flat if r)
        leading = [(int(math.ceil(math.log10(r.median / time_scale))), r) for r in flat if r]
        unit_digits = max(d for d, _ in leading)
        decimals = min(max(r.significant_figures - d, 0) for d, r in leading) if self._trim else 1
        width = unit_digits + decimals + (1 if decimals else 0)
        self._template = "{:>%d.%df}{:>%d}" % (width, decimals, 7 if self._highlight else 0)

    def num_to_str(self, value, sigfigs, spread):
        if value is None:
            return " " * len(self.num_to_str(1, sigfigs, None))
        if self._trim:
            value = common.trim_sigfig(value, sigfigs)
        note = " (! %.0f%%)" % (spread * 100) if self._highlight and spread is not None else ""
        return self._template.format(value, note)


def _colour(segment, value, best):
    if value <= best * 1.01 or value <= best + 100e-9:
        return BEST + BOLD + segment + TERMINATE * 2
    if value <= best * 1.1:
        return GOOD + BOLD + segment + TERMINATE * 2
    if value >= best * 5:
        return VERY_BAD + BOLD + segment + TERMINATE * 2
    if value >= best * 2:
        return BAD + segment + TERMINATE * 2
    return segment


class _Table:
    """The table of one label's measurements."""

    def __init__(self, results, colorize, trim_significant_figures, highlight_warnings):
        if len({r.label for r in results}) != 1:
            raise AssertionError("All results must share the same label")
        self.results = results
        self.label = results[0].label
        self._colorize = colorize
        self._highlight = highlight_warnings
        self.time_unit, self.time_scale = common.select_unit(min(r.median for r in results))
        row_keys = common.ordered_unique([(r.num_threads, r.env, r.as_row_name) for r in results])
        self.row_keys = sorted(row_keys, key=lambda k: k[:2])   # stable: statement order kept within a group
        self.column_keys = common.ordered_unique([r.description for r in results])
        self.grid = [[None] * len(self.column_keys) for _ in self.row_keys]
        rows, cols = {k: i for i, k in enumerate(self.row_keys)}, {k: j for j, k in enumerate(self.column_keys)}
        for r in results:
            self.grid[rows[(r.num_threads, r.env, r.as_row_name)]][cols[r.description]] = r
        # rows are grouped by thread count; a group opens with a "N threads: ----" separator
        self.group_of, starts = [], []
        for i, (threads, _, _) in enumerate(self.row_keys):
            if i == 0 or threads != self.row_keys[i - 1][0]:
                starts.append(i)
            self.group_of.append(len(starts) - 1)
        self.starts = set(starts)
        groups = [[row for row, g in zip(self.grid, self.group_of) if g == group] for group in range(len(starts))]
        self.columns = [_Column([tuple(row[j] for row in g) for g in groups], self.time_scale, trim_significant_figures,
                                highlight_warnings) for j in range(len(self.column_keys))]

    def _row_strings(self, i):
        envs = {r.env for r in self.results}
        prior_env = "" if i in self.starts else self.row_keys[i - 1][1]
        render_env = len(envs) > 1 and self.row_keys[i][1] != prior_env
        env_width = max(len(e) for e in envs) if len(envs) > 1 else 0
        first = next(r for r in self.grid[i] if r is not None)
        out = ["  " + ("(%s)" % first.env if render_env else "").ljust(env_width + 4) + first.as_row_name]
        for m, col in zip(self.grid[i], self.columns):
            out.append(col.num_to_str(None, 1, None) if m is None else col.num_to_str(
                m.median / self.time_scale, m.significant_figures, m.iqr / m.median if m.has_warnings else None))
        return out

    def _best(self, i, ncols):
        if self._colorize == Colorize.ROWWISE:
            return [min(r.median for r in self.grid[i] if r is not None)] * ncols
        if self._colorize == Colorize.COLUMNWISE:
            medians = [[r.median for r in col.grouped_results[self.group_of[i]] if r is not None]
                       for col in self.columns]
            return [min(m) if m else None for m in medians]
        return [-1] * ncols

    def render(self):
        string_rows = [[""] + self.column_keys] + [self._row_strings(i) for i in range(len(self.row_keys))]
        ncols = max(len(r) for r in string_rows)
        for r in string_rows:
            r.extend([""] * (ncols - len(r)))
        widths = [max(len(s) for s in col) for col in zip(*string_rows)]
        lines = ["  |  ".join(s.center(w) for s, w in zip(string_rows[0], widths))]
        overall = len(lines[0])
        for i, strings in enumerate(string_rows[1:]):
            if i in self.starts:
                lines.append(("%d threads: " % self.row_keys[i][0]).ljust(overall, "-"))
            cells = [strings[0].ljust(widths[0])]
            for s, w, m, best in zip(strings[1:], widths[1:], self.grid[i], self._best(i, len(strings))):
                s = s.center(w)
                if self._colorize != Colorize.NONE and m is not None and best is not None:
                    s = _colour(s, m.median, best)
                cells.append(s)
            lines.append("  |  ".join(cells))
        warn = self._highlight and any(r.has_warnings for r in self.results)
        return "[%s]\n%s\n\nTimes are in %ss (%s).\n%s" % (
            (" " + (self.label or "") + " ").center(overall - 2, "-"), "\n".join(lines),
            common.unit_to_english(self.time_unit), self.time_unit,
            "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n" if warn else "")


class Compare:
    """Tables of many Measurements: print(compare) or compare.print()."""

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self):
        return "\n".join(self._render())

    def extend_results(self, results):
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError("Expected an instance of `Measurement`, got %s instead." % type(r))
        self._results.extend(results)

    def trim_significant_figures(self):
        self._trim_significant_figures = True

    def colorize(self, rowwise=False):
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self):
        self._highlight_warnings = True

    def print(self):
        print(str(self))

    def _render(self):
        by_label = collections.defaultdict(list)
        for r in common.Measurement.merge(self._results):
            by_label[r.label].append(r)
        return [_Table(group, self._colorize, self._trim_significant_figures, self._highlight_warnings).render()
                for group in by_label.values()]
