"""The bundled SummEval data."""

from __future__ import annotations

import sys
from importlib import resources
from typing import TYPE_CHECKING

import pandas as pd
import xarray as xr

from .._io.tables import from_dataframe
from .._warn import one_call

if TYPE_CHECKING:  # pragma: no cover
    if sys.version_info >= (3, 11):
        from importlib.resources.abc import Traversable
    else:
        from importlib.abc import Traversable

__all__ = ["SUMMEVAL_HUMAN", "summeval", "summeval_path"]

#: The 8 human-judgment columns of :func:`summeval` (expert and crowd means).
SUMMEVAL_HUMAN: tuple[str, ...] = (
    "expert_relevance",
    "expert_coherence",
    "expert_consistency",
    "expert_fluency",
    "turker_relevance",
    "turker_coherence",
    "turker_consistency",
    "turker_fluency",
)

_SUMMEVAL_FILE = "summeval.csv.gz"

_SUMMEVAL_ATTRS = {
    "title": "SummEval: human judgments and automatic metric scores for 16 "
             "summarization systems on 100 CNN/DailyMail test documents",
    "source": "Human judgments: SummEval (Yale-LILY/SummEval). Metric scores: as "
              "computed for Deutsch, Dror & Roth (2021) "
              "(CogComp/stat-analysis-experiments).",
    "references": "Fabbri, A. R., Kryscinski, W., McCann, B., Xiong, C., Socher, R. & "
                  "Radev, D. (2021). SummEval: Re-evaluating Summarization Evaluation. "
                  "Transactions of the Association for Computational Linguistics (TACL), "
                  "9, 391-409. | Deutsch, D., Dror, R. & Roth, D. (2021). A Statistical "
                  "Analysis of Summarization Evaluation Metrics Using Resampling "
                  "Methods. Transactions of the Association for Computational "
                  "Linguistics (TACL), 9, 1132-1146. | Please cite both works when using "
                  "this data.",
    "license": "Human judgments: MIT licence (SummEval, Yale-LILY/SummEval); metric "
               "scores: Apache-2.0 (CogComp/stat-analysis-experiments).",
}

_HUMAN_DESCRIPTION = {
    "expert": "mean of 3 expert annotators, 1-5 Likert scale",
    "turker": "mean of 5 crowd annotators, 1-5 Likert scale",
}


@one_call
def summeval_path() -> Traversable:
    """Location of the bundled SummEval table (gzip-compressed CSV).

    Returns
    -------
    pathlib.Path or importlib.resources.abc.Traversable
        A real :class:`pathlib.Path` when the package is installed as plain
        files (the usual case), which pandas and :func:`xcorrstat._io.read`
        accept directly; otherwise a Traversable to open with ``.open("rb")``.

    Examples
    --------
    >>> summeval_path().name
    'summeval.csv.gz'
    """
    return resources.files(__package__) / _SUMMEVAL_FILE


@one_call
def summeval() -> xr.Dataset:
    """SummEval human judgments and automatic metric scores.

    16 summarization systems (``M0`` ... ``M23``) x 100 CNN/DailyMail test
    documents, no missing values.  Each call reads the bundled file afresh.

    The human judgments are from SummEval (Fabbri et al., 2021, "SummEval:
    Re-evaluating Summarization Evaluation", TACL; MIT licence,
    Yale-LILY/SummEval).  The metric scores are those computed for Deutsch,
    Dror & Roth (2021), "A Statistical Analysis of Summarization Evaluation
    Metrics Using Resampling Methods", TACL (repository
    CogComp/stat-analysis-experiments, Apache-2.0).  Please cite both works
    when you use this data.

    Returns
    -------
    xarray.Dataset
        Dims ``system`` (16) x ``input`` (100); 42 float64 data variables:

        - 8 human judgments (``attrs["role"] == "human"``), on a 1-5 Likert scale:
          ``expert_{relevance,coherence,consistency,fluency}`` are means of 3
          expert annotators and ``turker_{...}`` means of 5 crowd annotators.
        - 34 automatic metrics (``attrs["role"] == "metric"``): ROUGE-1/2/3/4/L
          and ROUGE-SU4 recall, precision and F1 (0-100, single reference),
          BERTScore precision/recall/F1, MoverScore, QAEval EM/F1/LERC, S3
          pyr/resp, AutoSummENG, MeMoG, NPowER, METEOR and BEwTE
          precision/recall/F1.

        Labels are strings in file order; Dataset attrs ``title``,
        ``source``, ``references`` and ``license`` carry the attribution.

    Examples
    --------
    >>> ds = summeval()
    >>> dict(ds.sizes)
    {'system': 16, 'input': 100}
    >>> sorted({v.attrs["role"] for v in ds.data_vars.values()})
    ['human', 'metric']
    """
    with summeval_path().open("rb") as fh:
        df = pd.read_csv(fh, compression="gzip")
    ds = from_dataframe(df, system="system", input="input", human=SUMMEVAL_HUMAN)
    for name in SUMMEVAL_HUMAN:
        ds[name].attrs["description"] = _HUMAN_DESCRIPTION[name.split("_")[0]]
    ds.attrs.update(_SUMMEVAL_ATTRS)
    return ds
