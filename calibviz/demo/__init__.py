"""Demo datasets shipped with calibviz: the dashboard opens on one of them.

Each has a one-line story for stakeholder demos. Regenerate with
``python scripts/make_demos.py`` (deterministic; see calibviz/demo/README.md
for the provenance and the licence of the CIFAR-10 predictions).
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..errors import InputError
from ..io import Predictions, load_models

__all__ = ["DemoDataset", "DEMOS", "demo_datasets", "demo_info", "demo_path", "load_demo", "load_demo_models"]


@dataclass(frozen=True)
class DemoDataset:
    name: str
    file: str
    title: str
    story: str
    kind: str


DEMOS: dict[str, DemoDataset] = {d.name: d for d in [
    DemoDataset(
        "hospital_readmission", "hospital_readmission.csv", "Hospital readmission risk (binary, 20 000 patients)",
        "A readmission model with a small ECE that under-predicts mid-range risks, overestimates the highest ones, "
        "and ignores age: it under-predicts risk for older patients and over-predicts it for younger ones.",
        "binary",
    ),
    DemoDataset(
        "cifar10_resnet50", "cifar10_resnet50.parquet", "CIFAR-10 image classifier (10 classes, ResNet-50)",
        "A real ResNet-50 on the CIFAR-10 test set: 95% accurate and overconfident, and its confidence hides "
        "class-by-class miscalibration (Gupta & Ramdas 2022).",
        "multiclass",
    ),
    DemoDataset(
        "loan_recalibration", "loan_recalibration.csv", "Loan default before and after recalibration (2 models)",
        "A boosted loan-default model is overconfident; Platt scaling on a held-out sample fixes most of it.",
        "binary, 2 models",
    ),
]}


def demo_datasets() -> list[str]:
    """Names of the demo datasets, the default one first.

    Examples
    --------
    >>> demo_datasets()
    ['hospital_readmission', 'cifar10_resnet50', 'loan_recalibration']
    """
    return list(DEMOS)


def demo_info(name: str) -> DemoDataset:
    """Title, story and kind of a demo dataset."""
    try:
        return DEMOS[name]
    except KeyError:
        raise InputError(f"unknown demo dataset {name!r}; choose one of {', '.join(DEMOS)}.") from None


def demo_path(name: str) -> Path:
    """Path of the file behind a demo dataset (CSV or Parquet).

    Examples
    --------
    >>> demo_path("hospital_readmission").name
    'hospital_readmission.csv'
    """
    info = demo_info(name)
    return Path(str(resources.files("calibviz.demo") / "data" / info.file))


def load_demo_models(name: str) -> dict[str, Predictions]:
    """Every model of a demo dataset, ``{model name: Predictions}``."""
    return load_models(demo_path(name), name=name)


def load_demo(name: str = "hospital_readmission") -> Predictions:
    """Load a demo dataset (its first model for multi-model demos; see :func:`load_demo_models`).

    Examples
    --------
    >>> p = load_demo("cifar10_resnet50")
    >>> p.n, p.n_classes, p.classes[:3]
    (10000, 10, ('airplane', 'automobile', 'bird'))
    """
    return next(iter(load_demo_models(name).values()))
