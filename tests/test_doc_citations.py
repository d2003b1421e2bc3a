"""Every ``docs/X.md §N`` that the code, the tests and the tables cite names a heading of that file.

A citation is a path to a Markdown file followed by one or more section numbers ("docs/hip-occupancy.md
§4", "docs/code-object-format.md §2.3 and §4.1", "§3.6/§3.7"); the section exists when the file has a
heading numbered so ("## 4. ...", "### 2.3 ..."). A cited .md path outside docs/ (a note that never
shipped) is stale too. The oracle is the docs themselves, read here.
"""

from __future__ import annotations

import re
from pathlib import Path

from conftest import ROOT

# A .md path, then its section numbers, separated by spaces, commas, slashes or "and"/"or"; a
# comment marker may sit between them where a citation wraps onto the next line.
CITATION = re.compile(r"([\w./-]+\.md)((?:(?:[\s#,/-]|\band\b|\bor\b)*§\d+(?:\.\d+)*)+)")
SECTION = re.compile(r"§(\d+(?:\.\d+)*)")
HEADING = re.compile(r"^#{1,6} +(\d+(?:\.\d+)*)\.?[ \t]", re.M)
CITING = ("amdocc", "tests", "tables")


def headings(doc: Path) -> set[str]:
    return set(HEADING.findall(doc.read_text(encoding="utf-8")))


def stale_citations(text: str, root: Path) -> list[str]:
    """The citations in ``text`` that name no heading of a docs/ file under ``root``."""
    stale = []
    for match in CITATION.finditer(text):
        path, sections = match.group(1), SECTION.findall(match.group(2))
        doc = root / path
        if not path.startswith("docs/") or not doc.is_file():
            stale.append(f"{path} {', '.join('§' + s for s in sections)}: not a page of docs/")
            continue
        known = headings(doc)
        stale += [f"{path} §{s}: no such heading" for s in sections if s not in known]
    return stale


def cited_files() -> list[Path]:
    return sorted(
        path
        for room in CITING
        for path in (ROOT / room).rglob("*")
        if path.suffix in (".py", ".toml")
        and path.is_file()
        and "__pycache__" not in path.parts
        and path != Path(__file__).resolve()  # this file plants stale citations on purpose
    )


def test_every_cited_section_is_a_heading_of_its_page():
    stale = [
        f"{path.relative_to(ROOT)}: {problem}"
        for path in cited_files()
        for problem in stale_citations(path.read_text(encoding="utf-8"), ROOT)
    ]
    assert stale == []


def test_the_citations_are_many_and_reach_every_room():
    # The pattern must keep finding what it checks: a regex that matched nothing would pass.
    found = {
        path.relative_to(ROOT).parts[0] for path in cited_files() if CITATION.search(path.read_text(encoding="utf-8"))
    }
    assert found == set(CITING)
    count = sum(len(CITATION.findall(path.read_text(encoding="utf-8"))) for path in cited_files())
    assert count >= 100


def test_a_planted_stale_reference_is_found():
    # docs/hip-occupancy.md ends at §7, and its worked examples are §5: the "§9 example 1" the
    # tests cited before the move to docs/ is exactly this kind of drift.
    assert stale_citations("# docs/hip-occupancy.md §9 example 1", ROOT) == [
        "docs/hip-occupancy.md §9: no such heading"
    ]
    assert stale_citations("(docs/code-object-format.md §3.2/§3.7)", ROOT) == [
        "docs/code-object-format.md §3.7: no such heading"
    ]
    assert stale_citations("docs/code-object-format.md §2.3 and\n    # §4.2", ROOT) == []
    assert stale_citations("shared/research/hip-occupancy.md §4", ROOT) == [
        "shared/research/hip-occupancy.md §4: not a page of docs/"
    ]
    assert stale_citations("docs/hip-occupancy.md §5", ROOT) == []
    assert stale_citations("docs/hip-occupancy.md §1-§9", ROOT) == ["docs/hip-occupancy.md §9: no such heading"]


# A count of the project's own tests, lines or questions goes stale with the next commit: the README
# and the contributing guide state none (a figure about a corpus, such as its 2,501 .co files, is
# about the corpus, not the project).
PROJECT_COUNT = re.compile(r"~?\b\d[\d,]*\+? (?:tests|test functions|lines|questions)\b")


def test_the_readme_and_contributing_guide_state_no_counts_of_the_project():
    for page in ("README.md", "docs/contributing.md"):
        assert PROJECT_COUNT.findall((ROOT / page).read_text(encoding="utf-8")) == [], page
    assert PROJECT_COUNT.findall("the fast tier: ~1,500 tests") == ["~1,500 tests"]  # the old wording


def test_the_readme_lists_each_models_current_options():
    # The occupancy row of README's Python table names every option each model takes now
    # (amdocc.models.dispatch.OPTIONS), e.g. llvm's llvm_version, which replaced two switches.
    from amdocc.models.dispatch import OPTIONS

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    (row,) = [line for line in text.splitlines() if line.startswith("| `amdocc.occupancy(")]
    options = row[row.index("options: ") :]
    for model, names in OPTIONS.items():
        for name in names:
            assert f"{model} `{name}`" in options, (model, name)
