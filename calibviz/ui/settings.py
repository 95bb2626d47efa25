"""View settings shared by all pages: sidebar controls, session persistence, shareable URLs.

Settings live in ``st.session_state["cv_settings"]`` (a plain dict that
survives page switches; widget state alone does not). Widgets are keyed
``w_<name>`` and copy their value into that dict in ``on_change``. The URL
carries every non-default setting that defines the current page's view
(``?scheme=pavabc&alpha=0.01&data=...``), so a view can be shared; a fresh
session reads it back first.

Scope: a setting is *global* (the data's model, binning, uncertainty and metric
choices of the sidebar: every page's URL carries them) or belongs to the pages
that use it (``Setting.pages``: the Variables page's ``feature``, the Compare
page's ``ref``, ...). ``sync_url(page=...)`` writes the global settings and the
current page's, so a choice made on one page never rides along in the links of
the others; the session still remembers it (going back to Variables keeps the
feature).
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ..binning import PAVABC, SCHEME_NAMES, get_scheme, pavabc_sizes
from ..panel import BINARY_METRICS, DEFAULT_BINARY_METRICS, PanelConfig
from .compute import guarded

__all__ = ["Setting", "SETTINGS", "settings", "init_from_url", "sync_url", "binning_controls", "metric_controls",
           "uncertainty_controls", "set_setting", "panel_config", "pavabc_conflict", "page_control", "tce_scheme",
           "tce_axis_control",
           "SCHEME_LABELS", "url_params", "url_values", "replace_settings"]

_STORE = "cv_settings"
SCHEME_LABELS = {
    "uniform": "Uniform (equal width)", "equal_mass": "Equal mass (quantiles)", "pava": "PAVA (isotonic blocks)",
    "pavabc": "PAVA-BC (size-constrained)", "median_variance": "Median-variance splits",
}
INTERVAL_LABELS = {"wilson": "Wilson", "beta": "Clopper-Pearson (exact)", "jeffreys": "Jeffreys"}
ALPHAS = (0.001, 0.01, 0.05, 0.1)
RESAMPLES = (0, 50, 100, 200, 500, 1000)


@dataclass(frozen=True)
class Setting:
    name: str
    default: object
    parse: type
    choices: tuple | None = None
    low: float | None = None
    high: float | None = None
    #: page titles (as given to ``page_setup``) whose URL carries the setting; empty = every page (global)
    pages: tuple = ()

    def in_url_of(self, page: str | None) -> bool:
        """Whether the URL of ``page`` carries this setting (``page=None``: any page)."""
        return not self.pages or page is None or page in self.pages

    def coerce(self, raw):
        """Parse a URL value; None when it is not acceptable."""
        try:
            if self.parse is tuple:
                value = tuple(v for v in str(raw).split(",") if v)
                ok = all(v in (self.choices or v) for v in value)
                return value if ok and value else None
            value = self.parse(raw)
        except (TypeError, ValueError):
            return None
        if self.choices is not None and value not in self.choices:
            return None
        if self.low is not None and value < self.low or self.high is not None and value > self.high:
            return None
        return value


def _flag(raw) -> bool:
    """A yes/no URL value: 1/true/yes or 0/false/no; anything else is not a flag (so it is reported as ignored)."""
    text = str(raw).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"not a yes/no value: {raw!r}")


_RELIABILITY, _TCE, _VARIABLES, _COMPARE = ("Reliability",), ("Test-based",), ("Variables",), ("Compare",)

SETTINGS: dict[str, Setting] = {s.name: s for s in [
    Setting("model", "", str),  # the analysed model of several ("" = the first); the sidebar's picker
    Setting("scheme", "uniform", str, tuple(k for k in SCHEME_LABELS if k in SCHEME_NAMES)),
    Setting("bins", 15, int, low=2, high=50),  # the slider's range
    Setting("n_min", 0, int, low=0, high=10**9),
    Setting("n_max", 0, int, low=0, high=10**9),
    Setting("alpha", 0.05, float, ALPHAS),
    Setting("interval", "wilson", str, tuple(INTERVAL_LABELS)),
    Setting("boot", 100, int, RESAMPLES),
    Setting("seed", 0, int, low=0, high=2**31 - 1),
    Setting("metrics", tuple(DEFAULT_BINARY_METRICS), tuple, tuple(BINARY_METRICS)),
    Setting("view", "confidence", str, pages=_RELIABILITY + _TCE),  # ui.views.view_picker
    Setting("band", True, _flag),
    Setting("tce_scheme", "pavabc", str, ("pavabc", "pava", "equal_mass", "uniform"), pages=_TCE),
    Setting("tce_axis", "bin", str, ("bin", "probability"), pages=_TCE),
    # the Test-based page's own number of bins (uniform or equal-mass TCE): it shared the other pages' and moved
    # their ECE (a walk-through), where its caption says the page keeps its own binning
    Setting("tce_bins", 15, int, low=2, high=50, pages=_TCE),
    Setting("feature", "", str, pages=_VARIABLES),
    Setting("kind", "error", str, ("error", "rate"), pages=_VARIABLES),
    Setting("span", 0.75, float, (0.3, 0.5, 0.75, 1.0), pages=_VARIABLES),  # the Variables page's slider options
    Setting("scale", "percent", str, ("percent", "probability"), pages=_VARIABLES),
    Setting("diagram", "binned", str, ("binned", "corp"), pages=_RELIABILITY),  # binned or CORP (PAV) diagram
    Setting("corp_conf", False, _flag, pages=_RELIABILITY),
    Setting("ref", "", str, pages=_COMPARE),  # Compare page: the reference model ("" = the first)
    Setting("murphy", False, _flag, pages=_COMPARE),
    Setting("tscore", "brier", str, ("brier", "log"), pages=_COMPARE),  # the score the triptych decomposes
    Setting("present", False, _flag),  # presentation mode (ui.presentation): no sidebar, large fonts
]}


def _store() -> dict:
    if _STORE not in st.session_state:
        st.session_state[_STORE] = {k: s.default for k, s in SETTINGS.items()}
    store = st.session_state[_STORE]
    if len(store) < len(SETTINGS):  # a setting added while the session was open
        for k, s in SETTINGS.items():
            store.setdefault(k, s.default)
    return store


def replace_settings(raw: dict) -> list[str]:
    """Set every setting from link-style text values (a session file's); the others go back to their defaults.

    Values are validated as a link's; returns the ``name=value`` pairs that were ignored (unknown or invalid).
    """
    values = {k: s.default for k, s in SETTINGS.items()}
    ignored = []
    for key, text in raw.items():
        spec = SETTINGS.get(key)
        value = None if spec is None else spec.coerce(text)
        if value is None:
            ignored.append(f"{key}={text}")
        else:
            values[key] = value
    store = _store()  # updated in place: the widgets' callbacks hold this dict
    store.clear()
    store.update(values)
    return ignored


def url_values() -> dict[str, str]:
    """Every setting as the text a link would carry (defaults included): what a session file keeps."""
    return {k: _url_value(v) for k, v in _store().items() if k in SETTINGS}


def settings() -> dict:
    """The current settings (a copy)."""
    return dict(_store())


def set_setting(name: str, value) -> None:
    _store()[name] = value


def init_from_url() -> list[str]:
    """Read settings from the URL once per session; returns the parameters that were ignored."""
    if st.session_state.get("cv_url_read"):
        return []
    st.session_state["cv_url_read"] = True
    ignored = []
    store = _store()
    for key, raw in st.query_params.to_dict().items():
        spec = SETTINGS.get(key)
        if spec is None:
            continue
        value = spec.coerce(raw)
        if value is None:
            ignored.append(f"{key}={raw}")
        else:
            store[key] = value
    return ignored


def _url_value(v) -> str:
    if isinstance(v, bool):  # present=1, band=0: what people type (and what _flag reads)
        return "1" if v else "0"
    return ",".join(v) if isinstance(v, tuple) else str(v)


def url_params(page: str | None = None, extra: dict | None = None) -> dict[str, str]:
    """The URL parameters of ``page``: its non-default settings (global and the page's own) and ``extra``."""
    params = {k: _url_value(v) for k, v in _store().items()
              if k in SETTINGS and v != SETTINGS[k].default and SETTINGS[k].in_url_of(page)}
    params.update({k: str(v) for k, v in (extra or {}).items() if v is not None and v != ""})
    return params


def sync_url(extra: dict | None = None, page: str | None = None) -> None:
    """Write the settings that define ``page``'s view (and ``extra``, e.g. the data) into the URL.

    Settings of other pages stay in the session (see the module docstring) but not in this page's URL.
    """
    params = url_params(page, extra)
    if params != st.query_params.to_dict():
        st.query_params.from_dict(params)


def _widget(name: str, factory, **kwargs):
    """Render a widget bound to the settings store."""
    key = f"w_{name}"
    store = _store()
    st.session_state[key] = list(store[name]) if isinstance(store[name], tuple) else store[name]

    def _copy():
        value = st.session_state[key]
        store[name] = tuple(value) if isinstance(value, list) else value

    return factory(key=key, on_change=_copy, **kwargs)


def binning_controls(n_rows: int, *, setting: str = "scheme") -> None:
    """Binning scheme (the setting ``setting``: "scheme" for ECE-type pages, "tce_scheme" for TCE) and its parameters."""
    names = list(SETTINGS[setting].choices)
    _widget(setting, st.selectbox, label="Binning", options=names, format_func=SCHEME_LABELS.get,
            help="How predictions are grouped into bins for the diagram and the binned metrics"
                 + (", except TCE: TCE bins by PAVA-BC on every page, as its paper defines it (the Test-based "
                    "page compares other binnings)." if setting == "scheme" else "."))
    scheme = _store()[setting]
    if scheme in ("uniform", "equal_mass"):
        _widget("tce_bins" if setting == "tce_scheme" else "bins", st.slider, label="Number of bins", min_value=2,
                max_value=50, help="More bins show more detail but each bin's rate is noisier.")
    conflict = pavabc_conflict(n_rows)
    # TCE on every page bins by PAVA-BC with these sizes: a conflict keeps them in view under any scheme, or the
    # control that fixes it would be hidden
    if scheme == "pavabc" or conflict:
        auto_min, auto_max = max(1, n_rows // 20), max(1, n_rows // 5)
        _widget("n_min", st.number_input, label=f"Smallest bin (0: rows / 20 = {auto_min:,})", min_value=0, step=50,
                help=f"PAVA-BC minimum bin size; 0 uses N/20 = {auto_min:,} as the TCE paper recommends. TCE "
                     "uses it on every page.")
        _widget("n_max", st.number_input, label=f"Largest bin (0: rows / 5 = {auto_max:,})", min_value=0, step=50,
                help=f"PAVA-BC maximum bin size; 0 uses N/5 = {auto_max:,}. TCE uses it on every page.")
        # the inputs' on_change ran before this rerun: the store already holds what they show. The Test-based
        # page binning by PAVA-BC stops with the message where the reader looks (the main area; the sidebar's
        # was below the fold at 1024 px and the page said it twice, walk-throughs)
        stops = setting == "tce_scheme" and scheme == "pavabc" and _explicit_conflict(_store())
        if conflict and not stops:
            st.error(conflict, icon=":material/error:")
    elif setting == "scheme" and "tce" in _store()["metrics"] and (int(_store()["n_min"]) or int(_store()["n_max"])):
        # sizes set where the bins are PAVA-BC change TCE here too, with their controls hidden (a walk-through
        # saw the Reliability page's TCE move from 67.36% to 60.72% with nothing on the page to say why)
        sizes = pavabc_sizes(n_rows, int(_store()["n_min"]) or None, int(_store()["n_max"]) or None)
        st.caption(f"TCE bins by PAVA-BC with Smallest bin {sizes[0]:,} and Largest bin {sizes[1]:,} (set where "
                   "Binning is PAVA-BC; 0 for rows / 20 and rows / 5).")
    elif setting == "scheme" and "tce" in _store()["metrics"]:
        # TCE stayed at 67.36% under every binning with nothing to say why (a walk-through)
        st.caption("TCE bins by PAVA-BC whatever the binning here (its paper's bins).")


def _explicit_conflict(s: dict) -> bool:
    """Both PAVA-BC sizes set, the largest below the smallest (PAVABC refuses them)."""
    return bool(int(s["n_min"]) and int(s["n_max"]) and int(s["n_min"]) > int(s["n_max"]))


def pavabc_conflict(n_rows: int) -> str | None:
    """Why the PAVA-BC bin sizes of the settings cannot bin ``n_rows`` rows (the largest below the smallest, one
    of them by default a share of the rows), in the controls' words; None when they can."""
    s = _store()
    n_min, n_max = pavabc_sizes(n_rows, int(s["n_min"]) or None, int(s["n_max"]) or None)
    if n_max >= n_min:
        return None
    smallest = f"{n_min:,}" if int(s["n_min"]) else f"{n_min:,} (rows / 20)"
    largest = f"{n_max:,}" if int(s["n_max"]) else f"{n_max:,} (rows / 5)"
    return (f"Largest bin {largest} is below Smallest bin {smallest}: TCE cannot be computed on any page. Raise "
            f"Largest bin to at least {n_min:,}, lower Smallest bin, or set both to 0 (rows / 20 and rows / 5).")


def uncertainty_controls() -> None:
    """Alpha, interval type, bootstrap resamples and seed."""
    _widget("alpha", st.select_slider, label="Significance level α", options=list(ALPHAS),
            help="Level of the tests (TCE, every verdict against a calibrated model, whose range is then the "
                 "central 1 - 2α of its redraws, 1 - α around a calibrated model's expected score for the "
                 "two-sided Brier score and log loss, and the Compare page's better or worse) and of the bins' and the "
                 "Compare page's intervals (1 - α).")
    _widget("interval", st.selectbox, label="Interval for observed rates", options=list(INTERVAL_LABELS),
            format_func=INTERVAL_LABELS.get, help="Binomial confidence interval drawn around each bin's rate.")
    _widget("band", st.checkbox, label="Show acceptance band",
            help="Range of rates that all bins of a perfectly calibrated model stay in together with probability "
                 "1 - α (binomial, each bin at 1 - (1 - α)^(1/bins)): a point outside is evidence at level α.")
    _widget("boot", st.select_slider, label="Bootstrap resamples", options=list(RESAMPLES),
            help="Resamples for the metric intervals; 0 turns them off (faster).")
    _widget("seed", st.number_input, label="Random seed", min_value=0, step=1,
            help="Seed of the bootstrap: the same seed gives the same intervals.")


def metric_controls() -> None:
    _widget("metrics", st.multiselect, label="Metrics", options=list(BINARY_METRICS),
            format_func=lambda k: BINARY_METRICS[k].label, help="Which metrics the panel shows.")


def page_control(name: str, factory, **kwargs):
    """A page-local control (in the main area) bound to the settings store and the URL."""
    return _widget(name, factory, **kwargs)


def tce_scheme(s: dict | None = None):
    """The binning of the Test-based page: PAVA-BC with the sidebar's n_min / n_max, or another scheme."""
    s = s or settings()
    if s["tce_scheme"] == "pavabc":  # sizes that cannot form bins: the message, once (binning_controls)
        return guarded(lambda: PAVABC(int(s["n_min"]) or None, int(s["n_max"]) or None))
    return get_scheme(s["tce_scheme"], n_bins=int(s["tce_bins"]))


def panel_config(s: dict | None = None) -> PanelConfig:
    """The metric options the current settings define."""
    s = s or settings()
    config = PanelConfig(binning=s["scheme"], n_bins=int(s["bins"]), alpha=float(s["alpha"]),
                         n_min=int(s["n_min"]) or None, n_max=int(s["n_max"]) or None)
    if _explicit_conflict(s) and config.binning in ("pavabc", "pava_bc"):
        # the page's bins cannot be made: say what is wrong and end the run. With other bins only TCE is lost: its
        # row reads n/a with the reason and the sidebar's note says how to fix the sizes (a walk-through found
        # Reliability and Compare blanked by a setting of the Test-based page)
        guarded(lambda: PAVABC(config.n_min, config.n_max))
    return config


def tce_axis_control() -> None:
    """The Test-based page's "Place bins" radio (in-memory and opened-file pages)."""
    page_control("tce_axis", st.radio, label="Place bins", options=["bin", "probability"], horizontal=True,
                 format_func={"bin": "by bin ID (as in the paper)", "probability": "on the probability axis"}.get,
                 help="The paper draws bins side by side by ID; the probability axis shows where they lie.")
