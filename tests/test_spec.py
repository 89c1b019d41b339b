"""docs/workloads.md and the catalogue say the same: every workload has a section with a variants
table (each variant with its model, the default marked) and a parameters table (each parameter
with its default value), and cites the source of its defaults; the document names no variant or
parameter the catalogue lacks."""
import re

import pytest

from bench_src import paths
from bench_src.catalogue import LANGS, WORKLOADS

SPEC = paths.ROOT / "docs" / "workloads.md"
LANG_NAMES = {"Go": "go", "Rust": "rust"}


def sections() -> dict[str, str]:
    parts = re.split(r"^### (\w+).*$", SPEC.read_text(), flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def table_rows(section: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in section.splitlines() if line.startswith("|") and not re.match(r"^\|\s*-", line)]


def variant_rows(section: str) -> dict[tuple[str, str], tuple[bool, str]]:
    """(lang, variant) -> (marked default, model), from the rows whose first cell names languages."""
    out = {}
    for cells in table_rows(section):
        langs = [p.strip() for p in cells[0].split(",")]
        if len(cells) != 4 or not all(lang in LANG_NAMES for lang in langs):
            continue
        m = re.fullmatch(r"`([^`]+)`( \(default\))?", cells[1])
        assert m, f"a variant cell must be `name` or `name` (default): {cells[1]!r}"
        for lang in langs:
            out[(LANG_NAMES[lang], m.group(1))] = (bool(m.group(2)), cells[2])
    return out


def param_rows(section: str) -> dict[str, str]:
    return {cells[0].strip("`"): cells[1] for cells in table_rows(section)
            if len(cells) == 3 and cells[0] != "parameter"}


def test_every_workload_has_a_section():
    assert set(WORKLOADS) <= set(sections()), set(WORKLOADS) - set(sections())


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_variants_defaults_and_models_match_the_catalogue(name):
    w = WORKLOADS[name]
    documented = variant_rows(sections()[name])
    expected = {(lang, v) for lang in LANGS for v in w.variants[lang]}
    assert set(documented) == expected, (f"{name}: documented only {set(documented) - expected}, "
                                         f"missing {expected - set(documented)}")
    for (lang, v), (is_default, model) in documented.items():
        assert is_default == (v == w.default_variant(lang)), f"{name} {lang} {v}: default mark"
        assert model == w.model(lang, v), f"{name} {lang} {v}: model {model!r}, catalogue {w.model(lang, v)!r}"


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_every_parameter_and_its_default_is_documented(name):
    rows = param_rows(sections()[name])
    w = WORKLOADS[name]
    assert set(rows) == {p.name for p in w.params}, f"{name}: documented {set(rows)}"
    for p in w.params:
        assert stated_defaults(p, rows[p.name]) == [], f"{name}: {p.name}'s row {rows[p.name]!r}"


def stated_defaults(p, values: str) -> list[str]:
    """The defaults of `p` its values cell does not state as defaults: an integer's as "default 8",
    a choice's as "`wal` (default" (or as a language's only choice)."""
    missing = []
    for lang in p.langs:
        d = p.default_for(lang)
        if p.kind == "int":
            stated = re.search(rf"\bdefault {re.escape(d)}\b", values.replace(",", ""))
        else:
            stated = f"`{d}` (default" in values or (len(p.choices_for(lang)) == 1 and f"`{d}`" in values)
        if not stated:
            missing.append(f"{lang} {d!r}")
    return sorted(set(missing))


def test_the_check_wants_a_default_stated_as_one():
    from bench_src.catalogue import Param

    linger = Param("linger_ms", "0")
    assert stated_defaults(linger, "integer >= 0, default 0") == []
    assert stated_defaults(linger, "integer >= 0, default 500") == ["go '0'", "rust '0'"], "a bound is no default"
    journal = Param("journal", "wal", kind="choice", choices=("wal", "delete"))
    assert stated_defaults(journal, "`delete`, `wal`") == ["go 'wal'", "rust 'wal'"]
    assert stated_defaults(journal, "`wal` (default), `delete`") == []


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_the_source_of_every_default_is_cited(name):
    section = sections()[name]
    assert re.search(r"^Defaults?:", section, flags=re.M), f"{name}: no 'Defaults:' paragraph"
    tail = section[re.search(r"^Defaults?:", section, flags=re.M).start():]
    assert "https://" in tail, f"{name}: the defaults paragraph cites no source"


def test_nothing_in_the_repository_reads_or_links_outside_it():
    """A clone holds everything it needs: no tracked file names the directory beside the checkout
    that the specification and reference figures once came from."""
    import subprocess

    from bench_src import paths

    files = subprocess.run(["git", "ls-files"], cwd=paths.ROOT, capture_output=True, text=True, check=True).stdout.split()
    assert files, "not a git checkout"
    needle = "../" + "shared"
    offenders = [f for f in files if (paths.ROOT / f).is_file()
                 and needle in (paths.ROOT / f).read_text(errors="ignore")]
    assert offenders == []


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_each_workload_sits_in_the_section_its_catalogue_entry_names(name):
    chapters = re.split(r"^## (\d+)\. .*$", SPEC.read_text(), flags=re.M)
    holding = [chapters[i] for i in range(1, len(chapters), 2) if re.search(rf"^### {name}\b", chapters[i + 1], re.M)]
    assert holding == [WORKLOADS[name].section]


def test_the_readmes_workload_table_is_the_catalogues():
    """The README's table of workloads names every workload with what its N counts, its variants, the
    default first, and its parameters, as the catalogue has them."""
    readme = (paths.ROOT / "README.md").read_text()
    table = readme[readme.index("| workload | what N counts |"):].split("\n\n")[0]
    rows = {cells[0].strip("`"): cells for cells in table_rows(table)[1:]}
    assert set(rows) == set(WORKLOADS), "a workload missing from the README's table, or one the catalogue lacks"
    for name, cells in rows.items():
        for lang, column in (("go", 2), ("rust", 3)):
            listed = [v.strip() for v in cells[column].split(",")]
            assert listed == list(WORKLOADS[name].variants[lang]), (name, lang, listed)
        assert cells[1].strip() == WORKLOADS[name].n_meaning, (name, cells[1])
        named = re.findall(r"`([a-z_]+)`", cells[4])
        assert named == [p.name for p in WORKLOADS[name].params], (name, named)
