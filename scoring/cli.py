"""Command line: validate, score, check-references, import, masked-inputs, verify.

Exit codes: 0 success/valid, 1 the input has problems (listed line by line), 2 usage error (bad arguments,
unreadable file). Never prints a traceback for bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from .api import dumps_result, read_public_inputs, score_file, validate_file
from .problems import InputError, Problem
from .tracks import TRACK_NAMES, get_track
from .version import SCORER_VERSION

__all__ = ["main"]

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
NEWLINE = b"\n"


class UsageError(Exception):
    """Bad arguments or an unreadable file (exit 2)."""


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except IsADirectoryError:
        raise UsageError(f"{what} {path} is a directory; give a .jsonl file") from None
    except OSError as error:
        raise UsageError(f"cannot read {what} {path}: {error.strerror}") from None


def _existing(path: str, what: str) -> Path:
    if not Path(path).exists():
        raise UsageError(f"{what} {path} does not exist")
    return Path(path)


def _print_problems(problems: Sequence[Problem], total: int, out: TextIO = sys.stderr) -> None:
    for problem in problems:
        print(f"  {problem}", file=out)
    if total > len(problems):
        print(f"  ... and {total - len(problems):,} more problems", file=out)


def _validate(args: argparse.Namespace) -> int:
    predictions = _read(args.predictions, "predictions file")
    if args.inputs:
        inputs = read_public_inputs(_read(args.inputs, "inputs file"))
        report = validate_file(args.track, predictions, inputs=inputs)
    else:
        report = validate_file(args.track, predictions, references=_existing(args.references, "references"))
    if report.valid:
        invalid = len(report.format_report)
        print(f"valid: {report.rows:,} predictions, every test row covered once")
        if invalid:
            are = "output is" if invalid == 1 else "outputs are"
            print(f"{invalid:,} {are} not schema-valid and will score as wrong on every field:")
            for entry in report.format_report[:20]:
                print(f"  line {entry['line']} (id {entry['id']}): {', '.join(entry['issues'])}")
            if invalid > 20:
                print(f"  ... and {invalid - 20:,} more")
    else:
        print(f"invalid: {report.errors_total:,} problem(s) in {args.predictions}", file=sys.stderr)
        _print_problems(report.errors, report.errors_total)
    for sentence in report.advice:
        print(f"advice: {sentence}", file=sys.stdout if report.valid else sys.stderr)
    return EXIT_OK if report.valid else EXIT_INVALID


def _write_atomically(path: Path, data: bytes) -> None:
    """Write via a temporary file in the same folder and rename, so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # mkstemp makes the file 0600; a result file is an ordinary file, readable as the umask allows.
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _score(args: argparse.Namespace) -> int:
    if args.bootstrap < 0:
        raise UsageError("--bootstrap must be 0 or more")
    predictions = _read(args.predictions, "predictions file")
    references = _existing(args.references, "references")
    subsets = _existing(args.subsets, "subsets folder or dev_subsets.json") if args.subsets else None
    with tempfile.TemporaryDirectory() as tmp:
        if subsets is not None and subsets.is_file():
            subsets = _membership_subsets(subsets, Path(tmp))
        result = score_file(
            args.track,
            references,
            predictions,
            subsets_dir=subsets,
            bootstrap=args.bootstrap,
            seed=args.seed,
            disclose=not args.all_cells,
        )
    data = dumps_result(result)
    if args.output:
        _write_atomically(Path(args.output), data)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    return EXIT_OK


def _membership_subsets(path: Path, folder: Path) -> Path:
    """A subsets folder built from a membership file such as the public `dev_subsets.json`
    (`{"<subset>": ["<id>", ...]}`): one `<subset>.jsonl` of `{"id"}` rows, matched to the references
    by id."""
    try:
        membership = json.loads(path.read_bytes())
    except (OSError, ValueError) as error:
        raise UsageError(f"cannot read {path} as JSON: {error}") from None
    if not isinstance(membership, dict) or not all(
        isinstance(name, str)
        and name
        and "/" not in name
        and not name.startswith(".")
        and isinstance(ids, list)
        and all(isinstance(i, str) for i in ids)
        for name, ids in membership.items()
    ):
        raise UsageError(
            f"{path}: expected a subsets folder, or a JSON object mapping subset names to lists "
            "of ids (like dev_subsets.json)"
        )
    for name, ids in membership.items():
        (folder / f"{name}.jsonl").write_text("".join(json.dumps({"id": i}) + "\n" for i in ids))
    return folder


def _check_references(args: argparse.Namespace) -> int:
    directory = _existing(args.directory, "reference bundle")
    if args.track == "varm":
        from .references import bundle_warnings, check_reference_bundle

        problems: list[Problem] = list(check_reference_bundle(directory))
        total = len(problems)
        for warning in bundle_warnings(directory):
            print(f"warning: {warning}", file=sys.stderr)
    else:
        track = get_track(args.track)
        checker = getattr(track, "check_reference_bundle", None)
        for warning in getattr(track, "bundle_warnings", lambda _: [])(directory):
            print(f"warning: {warning}", file=sys.stderr)
        if checker is not None:
            problems = list(checker(directory))
            total = len(problems)
        else:  # fall back to the track's own reader, which rejects a bad bundle with every problem
            try:
                track.load_references(directory)
                problems, total = [], 0
            except InputError as error:
                problems, total = error.problems, error.total
    if not problems:
        what = "gold file" if directory.is_file() else "reference bundle"
        print(f"ok: {directory} is a valid {args.track} {what}")
        return EXIT_OK
    print(f"{total:,} problem(s) in {directory}:", file=sys.stderr)
    _print_problems(problems, total)
    return EXIT_INVALID


def _import(args: argparse.Namespace) -> int:
    if args.dataset == "varm":
        from .varm_import import import_varm

        summary = import_varm(
            _existing(args.path, "dataset path"),
            Path(args.out_dir),
            fill_blank_targets=args.fill_blank_targets,
        )
        return _print_summary(summary)
    if args.fill_blank_targets:
        raise UsageError("--fill-blank-targets applies to --dataset varm only")
    try:
        from .toxitrace.importers import import_dataset
    except ModuleNotFoundError as error:
        if not (error.name or "").startswith(f"{__package__}.toxitrace"):
            raise
        raise UsageError("the ToxiTrace importer (scoring.toxitrace) is not installed") from None
    summary = import_dataset(args.dataset, _existing(args.path, "dataset path"), Path(args.out_dir))
    return _print_summary(summary)


def _print_summary(summary: dict[str, Any]) -> int:
    """The summary as JSON on stdout; each warning also as a line on stderr, where a person looks."""
    print(json.dumps(summary, ensure_ascii=False, indent=2, sort_keys=True))
    for warning in summary.get("warnings", []):
        print(f"warning: {warning}", file=sys.stderr)
    return EXIT_OK


def _masked_inputs(args: argparse.Namespace) -> int:
    if args.track == "varm":
        raise UsageError("masked-inputs is for the ToxiTrace tracks (cold, toxicn, cntp)")
    from .toxitrace.masked_inputs import masked_inputs_jsonl
    from .toxitrace.tracks import ToxiTraceTrack

    inputs = read_public_inputs(_read(args.inputs, "inputs file"))
    predictions = _read(args.predictions, "predictions file")
    track = get_track(args.track)
    assert isinstance(track, ToxiTraceTrack)  # VARM was refused above
    data = masked_inputs_jsonl(inputs, predictions, spans=track.span_mode)
    _write_atomically(Path(args.out), data)
    print(f"wrote {data.count(NEWLINE):,} masked texts ({len(inputs):,} rows x 6 variants) to {args.out}")
    return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m scoring", description=f"Leaderboard scorer {SCORER_VERSION}"
    )
    parser.add_argument("--version", action="version", version=SCORER_VERSION)
    commands = parser.add_subparsers(dest="command", required=True)

    validate = commands.add_parser("validate", help="check a predictions file (no scoring)")
    validate.add_argument("--track", required=True, choices=TRACK_NAMES)
    source = validate.add_mutually_exclusive_group(required=True)
    source.add_argument("--references", help="test.jsonl or a reference bundle folder")
    source.add_argument("--inputs", help='public test inputs JSONL ({"id", "text"} per line)')
    validate.add_argument("--predictions", required=True)
    validate.set_defaults(run=_validate)

    score = commands.add_parser("score", help="score a predictions file; result JSON to stdout or --output")
    score.add_argument("--track", required=True, choices=TRACK_NAMES)
    score.add_argument("--references", required=True, help="test.jsonl or a reference bundle folder")
    score.add_argument(
        "--subsets",
        help="folder of subset files (default: <bundle>/subsets), or a "
        "membership JSON such as the public dev_subsets.json",
    )
    score.add_argument("--predictions", required=True)
    score.add_argument("--bootstrap", type=int, default=1000, help="resamples for CIs (0: none)")
    score.add_argument("--seed", type=int, default=0)
    score.add_argument("--output", help="write the result here (atomically) instead of stdout")
    score.add_argument(
        "--all-cells",
        action="store_true",
        help="keep breakdown/subset cells the leaderboard withholds (small or label-pure "
        "groups); for public data such as the dev split",
    )
    score.set_defaults(run=_score)

    check = commands.add_parser("check-references", help="maintainer check of a reference bundle folder")
    check.add_argument("--track", required=True, choices=TRACK_NAMES)
    check.add_argument("directory", help="a bundle folder, or (varm) a single gold JSONL file")
    check.set_defaults(run=_check_references)

    imp = commands.add_parser("import", help="convert a published release (VARM, COLD, ToxiCN) to a bundle")
    imp.add_argument("--dataset", required=True, choices=("varm", "cold", "toxicn"))
    imp.add_argument("path", help="a release file, or the folder holding its split files")
    imp.add_argument("out_dir")
    imp.add_argument(
        "--fill-blank-targets",
        action="store_true",
        help="varm: write 无明确对象 for blank gold targets whose target_type is 无明确对象",
    )
    imp.set_defaults(run=_import)

    masked = commands.add_parser(
        "masked-inputs",
        help="write the masked texts (and their sha256) to run a model on for the masked "
        "probabilities of char_scores predictions",
    )
    masked.add_argument("--track", required=True, choices=TRACK_NAMES)
    masked.add_argument("--inputs", required=True, help='public test inputs JSONL ({"id", "text"} per line)')
    masked.add_argument("--predictions", required=True, help="predictions with char_scores on every line")
    masked.add_argument("out", help="output JSONL, one line per row and masking variant")
    masked.set_defaults(run=_masked_inputs)

    verify = commands.add_parser(
        "verify", help="check the signatures of a release or a result, and re-derive its numbers"
    )
    verify.add_argument("path", help="a release folder (or its rows.json), or one signed row / result JSON")
    verify.add_argument("--public-key", required=True, help="the service's key (base64) or a file holding it")
    verify.add_argument("--track", choices=TRACK_NAMES)
    verify.add_argument("--predictions", help="the row's predictions file (to re-derive its numbers)")
    verify.add_argument("--references", help="the test set (a public or retired one)")
    verify.set_defaults(run=_verify)
    return parser


def _verify(args: argparse.Namespace) -> int:
    from .verify import check_numbers, check_signatures, derived_columns, rows_of

    key_text = args.public_key
    if Path(key_text).is_file():
        key_text = Path(key_text).read_text(encoding="utf-8")
    try:
        rows = rows_of(_existing(args.path, "release or result"))
        problems = check_signatures(rows, key_text)
    except (ValueError, KeyError) as error:
        raise UsageError(f"cannot read {args.path} or the key: {error}") from None
    if args.predictions or args.references:
        if not (args.predictions and args.references and args.track) or len(rows) != 1:
            raise UsageError("re-deriving needs --track, --predictions and --references, and one row")
        part = (rows[0].get("result") or {}).get("slice", "full")
        if part != "full":  # slice membership is the maintainers' secret (../shared/spec/disclosure.md §2)
            raise UsageError(
                f"this result is on the test set's {part} slice, which cannot be re-derived from the full "
                "references; a release's rows (full.* columns) and a public test set's results can"
            )
        result = score_file(
            args.track,
            _existing(args.references, "references"),
            _read(args.predictions, "predictions"),
            bootstrap=0,
        )
        problems += check_numbers(rows[0], derived_columns(result))
    for problem in problems:
        print(problem)
    verdict = "FAILED" if problems else "OK"
    print(f"{verdict}: {len(rows)} row(s) checked, {len(problems)} problem(s)")
    return EXIT_INVALID if problems else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)  # exits 2 on usage errors
    try:
        return int(args.run(args))
    except UsageError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except InputError as error:
        print(f"error: {error.total:,} problem(s):", file=sys.stderr)
        _print_problems(error.problems, error.total)
        return EXIT_INVALID
    except ValueError as error:  # unknown/unavailable track or dataset
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
