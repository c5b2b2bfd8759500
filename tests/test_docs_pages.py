"""Every documentation page, and the README's examples, run top to bottom as written and print what
they show (tests/docs_runner.py says how a page is run). docs/wmt.md and docs/missing-values.md have
tests of their own."""

from __future__ import annotations

import glob
import os

import pytest
from docs_runner import NOT_RUN, page_blocks, prepare, run_page, runs, update_page

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
DOCS = os.path.join(ROOT, "docs")
OWN_TEST = {"wmt.md": "test_docs_wmt.py", "missing-values.md": "test_docs_missing_values.py"}
NO_CODE = {"api.md", "layout.md", "speed.md"}  # reference pages: directives, a folder tree, a measured table
PAGES = sorted(os.path.basename(p) for p in glob.glob(os.path.join(DOCS, "*.md")))
RUN_HERE = [p for p in PAGES if p not in OWN_TEST and p not in NO_CODE]
# Blocks marked "not run" on each page, each with its reason in the page: a reader's own files, a timing.
NOT_RUN_COUNT = {"report.md": 3, "scale-out.md": 1, "README.md": 1}


@pytest.fixture(autouse=True)
def _no_client_left():
    """A page that starts a dask.distributed cluster (docs/scale-out.md) closes it; if it failed
    half-way, close it here so that later tests do not run on it."""
    yield
    try:
        from distributed import default_client

        client = default_client()
    except (ImportError, ValueError):
        return
    cluster = client.cluster
    client.close()
    if cluster is not None:
        cluster.close()


def _path(page: str) -> str:
    return os.path.join(ROOT, page) if page == "README.md" else os.path.join(DOCS, page)


@pytest.mark.parametrize("page", RUN_HERE + ["README.md"])
def test_page_runs_as_written(page, tmp_path):
    path = _path(page)
    prepare(path, str(tmp_path))
    ran = run_page(path, str(tmp_path))
    blocks = page_blocks(path)
    assert ran == sum(runs(b) for b in blocks) >= 1
    assert sum(b.not_run is not None for b in blocks) == NOT_RUN_COUNT.get(page, 0)


def test_every_page_is_run_somewhere():
    assert set(OWN_TEST) | NO_CODE <= set(PAGES)  # no stale names: the other pages run here
    for page, test in OWN_TEST.items():
        assert os.path.exists(os.path.join(os.path.dirname(__file__), test)), test
    for page in NO_CODE:
        assert not any(runs(b) for b in page_blocks(_path(page))), page


def test_not_run_markers_give_a_reason():
    assert NOT_RUN.match("% not run: needs your own scores.csv").group("a") == "needs your own scores.csv"
    assert NOT_RUN.match("<!-- not run: needs a file -->").group("b") == "needs a file"
    assert NOT_RUN.match("% not run:") is None


SMALL_PAGE = """# A page

```python
x = 6 * 7
print(x)
```

```text
42
```

Some prose.

```text
not an output: it follows prose
```

```python
for k in range(5):
    print(k)
```

```text
0
1
...
```

% not run: raises on purpose
```python
raise RuntimeError
```

```python
{"x": x}
```

```text
{'x': 42}
```
"""


def test_runner_pairs_outputs_elides_echoes_and_skips(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(SMALL_PAGE, encoding="utf-8")
    blocks = page_blocks(str(page))
    assert [(b.lang, b.expected, b.not_run) for b in blocks] == [
        ("python", "42\n", None), ("text", None, None),
        ("python", "0\n1\n...\n", None), ("python", None, "raises on purpose"),
        ("python", "{'x': 42}\n", None)]
    assert blocks[1].code == "not an output: it follows prose\n"
    assert run_page(str(page), str(tmp_path)) == 3


def test_runner_fails_on_other_output(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(SMALL_PAGE.replace("0\n1\n...", "1\n..."), encoding="utf-8")
    with pytest.raises(AssertionError, match="printed"):
        run_page(str(page), str(tmp_path))


def test_update_rewrites_text_blocks_and_keeps_elisions(tmp_path):
    page = tmp_path / "page.md"
    old = SMALL_PAGE.replace("42\n```", "41\n```").replace("0\n1\n...", "7\n8\n...")
    page.write_text(old, encoding="utf-8")
    changes = update_page(str(page), str(tmp_path))
    assert len(changes) == 2
    assert page.read_text(encoding="utf-8") == SMALL_PAGE
    assert update_page(str(page), str(tmp_path)) == []


PLOT_PAGE = """```python
y = 1
```

```{eval-rst}
.. plot::
   :context: reset

   z = 2
```

```{eval-rst}
.. plot::
   :context: close-figs

   print(z)
```

```{eval-rst}
.. plot::

   print(NAME)
```
"""


def test_plot_directives_run_in_a_namespace_of_their_own(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(PLOT_PAGE.replace("NAME", "1"), encoding="utf-8")
    blocks = page_blocks(str(page))
    assert [(b.lang, b.context, b.code) for b in blocks] == [
        ("python", None, "y = 1\n"), ("plot", "reset", "z = 2\n"), ("plot", "close-figs", "print(z)\n"),
        ("plot", None, "print(1)\n")]
    assert run_page(str(page), str(tmp_path)) == 4
    for name in ("y", "z"):  # the page's names, and a context's names without :context:, are not seen
        page.write_text(PLOT_PAGE.replace("NAME", name), encoding="utf-8")
        with pytest.raises(NameError):
            run_page(str(page), str(tmp_path))


CONSOLE_PAGE = """```console
$ python -m pip install .
$ xcorrstat correlate --metrics rouge_2_recall --level system --method pearson
an outdated table
```
"""


def test_update_rewrites_what_a_console_command_prints(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(CONSOLE_PAGE, encoding="utf-8")
    assert len(update_page(str(page), str(tmp_path))) == 1
    lines = page.read_text(encoding="utf-8").splitlines()
    assert lines[:3] == CONSOLE_PAGE.splitlines()[:3] and lines[-1] == "```"
    assert "an outdated table" not in lines and any("rouge_2_recall" in x for x in lines[3:])
    assert run_page(str(page), str(tmp_path)) == 1
