"""WMT20 en-de system-level results (tests/data/README.md) through the labelled API.

The CSV has one row per system; as a Dataset it is 14 systems x 1 input, so system-level
correlations are correlations of the system scores. The outliers are dropped by selecting
systems of the Dataset.
"""

from pathlib import Path

import pandas as pd
import pytest

import xcorrstat

WMT20 = Path(__file__).parent / "data" / "wmt20_ende_sys.csv"


@pytest.fixture(scope="module")
def ds():
    frame = pd.read_csv(WMT20).assign(input="newstest2020")
    ds = xcorrstat.from_dataframe(frame.drop(columns=["human_raw"]), human=["human", "is_outlier"])
    assert dict(ds.sizes) == {"system": 14, "input": 1}
    return ds


@pytest.fixture(scope="module")
def kept(ds):
    return ds.sel(system=ds["is_outlier"].isel(input=0).values == 0)


@pytest.mark.parametrize(("metric", "published"), [("COMET", 0.8628757), ("BLEU", 0.8247221), ("esim", 0.8939532)])
def test_pearson_without_outliers(kept, metric, published):
    r = kept.corrstat.correlate(target="human", metrics=[metric], level="system", method="pearson")
    assert int(r["n"][0]) == 11
    assert float(r[0]) == pytest.approx(published, abs=1e-6)


def test_kendall_all_systems(ds):
    r = ds.corrstat.correlate(target="human", metrics=["COMET"], level="system", method="kendall")
    assert int(r["n"][0]) == 14
    assert float(r[0]) == pytest.approx(0.8461538, abs=1e-6)


@pytest.mark.parametrize(("better", "worse", "published"), [("esim", "YiSi-2", 0.0190746),
                                                             ("YiSi-0", "parbleu", 0.0384186)])
def test_williams_wmt_convention(kept, better, worse, published):
    # WMT (R psych::r.test): signed correlations, one-tailed p = P(T > |t|) with n - 3 df
    res = kept.corrstat.williams_test(target="human", x=better, y=worse, level="system", alternative="greater")
    assert int(res["n"]) == 11 and float(res["statistic"]) > 0
    assert float(res["pvalue"]) == pytest.approx(published, abs=1e-6)
