"""What the columns of the library's tables mean, one line each: the header tooltips of the dashboard's tables
(:mod:`calibviz.ui.columns`) and of the HTML report's.

The tables keep the library's column names (``mean_pred``, ``obs_rate``, ``cep``...), which are also the names of
the downloaded CSV and of ``cv.reliability_table``: one name for one quantity wherever a user meets it. Hovering
a header explains it. Names that mean different things in different tables (``n``, ``value``, ``low``) have no
entry.
"""
from __future__ import annotations

__all__ = ["COLUMN_HELP"]

#: column name -> one-line meaning (reliability tables, TCE columns, CORP curve tables, rankings)
COLUMN_HELP = {
    "bin": "Bin id in the binning scheme (0-based; empty bins are left out).",
    "lower": "Lower edge of the bin's predicted probabilities.",
    "upper": "Upper edge of the bin's predicted probabilities.",
    "positives": "Rows of the bin whose outcome is the positive class (y = 1).",
    "mean_pred": "Mean predicted probability in the bin (weighted when the data has weights).",
    "obs_rate": "Observed rate of the positive class in the bin (weighted when the data has weights).",
    "gap": "obs_rate - mean_pred: positive where the model under-predicts, negative where it over-predicts.",
    "ci_low": "Lower end of the confidence interval of the observed rate.",
    "ci_high": "Upper end of the confidence interval of the observed rate.",
    "accept_low": "Lowest observed rate that a calibrated model with this bin's mean prediction shows at the "
                  "test's level, this bin alone (the binomial acceptance band of TCE's test).",
    "accept_high": "Highest observed rate that a calibrated model with this bin's mean prediction shows at the "
                   "test's level, this bin alone (the binomial acceptance band of TCE's test).",
    "band_low": "Lower end of the diagram's green band: all bins of a calibrated model stay in their bands "
                "together with probability 1 - α (each bin at 1 - (1 - α)^(1/bins), Šidák).",
    "band_high": "Upper end of the diagram's green band: all bins of a calibrated model stay in their bands "
                 "together with probability 1 - α (each bin at 1 - (1 - α)^(1/bins), Šidák).",
    "rejected": "Predictions of the bin that a binomial test at level α rejects against the bin's observed rate "
                "(Matsubara et al. 2023); TCE counts them on its own bins (PAVA-BC by default), so on other bins "
                "they add up to another share.",
    "rejected_rate": "Share of the bin's predictions that are rejected (weighted when the data has weights); on "
                     "bins other than TCE's it is not TCE.",
    "frac": "Share of the total weight (rows without weights) in this bin: the grey bars.",
    "deviation": "Top-label deviation of the bin: the |observed - predicted| of each predicted class, weighted "
                 "by its share of the bin (at least |gap|).",
    "x": "Predicted probability (one row per distinct value).",
    "cep": "Conditional event probability: the PAV (isotonic) fit of the outcome at this prediction "
           "(CORP, Dimitriadis et al. 2021).",
    "block": "Id of the PAV block (a run of predictions that share one fitted value).",
    "block_lower": "Smallest prediction of the PAV block.",
    "block_upper": "Largest prediction of the PAV block.",
    "block_n": "Rows of the PAV block.",
    "block_weight": "Sum of the weights of the PAV block (= rows without weights).",
    "block_positives": "Rows of the PAV block whose outcome is positive.",
    "consistency_low": "Lower end of the consistency band: where the fit of a calibrated model would lie (its "
                       "whole curve inside with probability 1 - α).",
    "consistency_high": "Upper end of the consistency band: where the fit of a calibrated model would lie (its "
                        "whole curve inside with probability 1 - α).",
    "confidence_low": "Lower end of the spread of the curve refitted to labels drawn from it (the paper's "
                      "confidence band, at each point; not a range that holds the true curve).",
    "confidence_high": "Upper end of the spread of the curve refitted to labels drawn from it (the paper's "
                       "confidence band, at each point; not a range that holds the true curve).",
    "share": "Class-wise: prevalence of the class; top-label: share of rows predicted as the class.",
    "contribution": "The class's part of the overall metric (class-wise: value / K; top-label: share x value).",
    "vece": "Variable-based ECE (Kelly & Smyth 2023): the weighted mean over the variable's bins of |error "
            "rate - mean predicted error|.",
    "vece_low": "Lower end of VECE's bootstrap interval.",
    "vece_high": "Upper end of VECE's bootstrap interval.",
    "max_vce": "Largest |error rate - mean predicted error| over the variable's bins.",
    "x_at_max_vce": "Value of the variable where the gap is largest (numeric variables).",
    "level_at_max_vce": "Level of the variable where the gap is largest (categorical variables).",
}
