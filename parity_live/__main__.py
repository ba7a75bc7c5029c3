"""`python -m parity_live`: the live differential against the real openJiuwen releases.

Subcommands:
  live      install (if needed) every release, generate fresh cases with a new seed
            (`--count` steered with each profile's rules), let every release decide all
            of them, compare with our engine, print agreement per release
  generate  write random (steered) cases to a JSON Lines file
  oracle    let one release decide a cases file (writes cases with `expected`)
  compare   compare decided files with our engine (profile from the release table)
  corpus    write the small committed corpora under tests/data/parity/ (gzip JSON Lines)
  scenarios let every release run the scripted scenarios (fake server on 127.0.0.1) and
            keep what it wrote under tests/data/parity/artifacts/<release>/
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from inspector.core.releases import PROFILES, RELEASES, ReleaseProfile, profile_for_release
from inspector.encoding import load_cl100k
from parity_live.compare import agreement
from parity_live.generate import Generator
from parity_live.steer import steer
from parity_live.venvs import RELEASES as ALL_RELEASES
from parity_live.venvs import ensure_venv, release_env

RUNNER = Path(__file__).with_name("runner.py")
CORPUS_DIR = Path(__file__).resolve().parent.parent / "tests" / "data" / "parity"


def generate(seed: int, count: int, profile: ReleaseProfile | None = None) -> list[dict[str, Any]]:
    """`count` cases from `seed`, each steered near a boundary or an outcome.

    Steered with `profile`'s counting rules, or each case with a random profile's.
    """
    generator = Generator(seed)
    rng = random.Random(seed * 7919 + 1)
    encode_len = load_cl100k().encode_len
    return [steer(generator.case(index), rng, encode_len, profile) for index in range(count)]


def write_jsonl(path: Path, cases: list[dict[str, Any]]) -> None:
    """JSON Lines, ASCII-escaped (gzip when the name ends in .gz)."""
    text = "".join(json.dumps(case, ensure_ascii=True) + "\n" for case in cases)
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    else:
        path.write_text(text, encoding="utf-8")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Read a (gzip) JSON Lines file."""
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    return [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]


def oracle(release: str, source: Path, target: Path) -> None:
    """Run the runner inside the release's venv on `source`, writing `target`."""
    python = ensure_venv(release)
    log = target.with_suffix(".log")
    # the library writes its own logs/ into the working directory: give it a scratch one
    with log.open("w", encoding="utf-8") as handle, tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(
            [str(python), str(RUNNER), str(source.resolve()), str(target.resolve()), release],
            env=release_env(release),
            cwd=scratch,
            stdout=handle,
            stderr=subprocess.STDOUT,
            check=False,
        )
    if done.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
        raise SystemExit(f"openjiuwen {release} failed on {source}:\n" + "\n".join(tail))


def compare(files: list[Path], verbose: bool = False, other_profiles: bool = False) -> bool:
    """Print agreement per file (release from the cases); True when all agree 100 %.

    With `other_profiles`, also how each release agrees with the rules of the other
    profiles (what our engine computed before it knew the release), and which releases
    decided the same cases identically.
    """
    encode_len = load_cl100k().encode_len
    ok = True
    groups: dict[str, list[str]] = {}
    for path in files:
        cases = read_jsonl(path)
        release = cases[0].get("openjiuwen_version") if cases else None
        if not isinstance(release, str):
            print(f"{path}: no decided cases (no openjiuwen_version)", flush=True)
            ok = False
            continue
        profile = profile_for_release(release).profile
        result = agreement(release, cases, profile, encode_len)
        print(result.line(), flush=True)
        if verbose:
            for case_id, diff in result.examples:
                print(f"    {case_id}: {diff}")
        if other_profiles:
            for other in PROFILES:
                if other is not profile:
                    theirs = agreement(release, cases, other, encode_len)
                    print(
                        f"{'':>16}under profile {other.name}'s rules: {theirs.agreeing}/"
                        f"{theirs.cases} ({theirs.percent:.1f} %), reason differs in "
                        f"{theirs.fields['reason']}"
                    )
        key = hashlib.sha256(
            json.dumps([c["expected"] for c in cases], sort_keys=True).encode()
        ).hexdigest()
        groups.setdefault(key, []).append(release)
        ok = ok and result.agreeing == result.cases
    if other_profiles:
        print(
            "identical decisions on the same cases: "
            + " | ".join(", ".join(g) for g in groups.values())
        )
    return ok


def live(releases: list[str], count: int, seed: int | None, verbose: bool) -> bool:
    """The whole differential: install, generate, decide, compare."""
    seed = seed if seed is not None else random.SystemRandom().randrange(1, 10**9)
    started = time.monotonic()
    print(f"seed {seed}, {count} cases, releases {', '.join(releases)}", flush=True)
    for release in releases:
        ensure_venv(release)
    profiles = {
        profile_for_release(release).profile.name: profile_for_release(release).profile
        for release in releases
    }
    cases = [
        case
        for offset, profile in enumerate(profiles.values())
        for case in generate(seed + offset, count, profile)
    ]
    for index, case in enumerate(cases):
        case["id"] = f"{case['id']}-{index}"
    with tempfile.TemporaryDirectory(prefix="parity-live-") as folder:
        source = Path(folder) / "cases.jsonl"
        write_jsonl(source, cases)
        outputs = []
        for release in releases:
            target = Path(folder) / f"decided-{release}.jsonl"
            oracle(release, source, target)
            outputs.append(target)
        ok = compare(outputs, verbose, other_profiles=True)
    print(f"took {time.monotonic() - started:.0f} s", flush=True)
    return ok


def corpus(count: int, seed: int) -> None:
    """Decide `count` cases per profile with that profile's newest release; write the corpora."""
    CORPUS_DIR.mkdir(parents=True, exist_ok=True)
    profiles = {profile.name: profile for profile in RELEASES.values()}
    for offset, profile in enumerate(profiles.values()):
        cases = generate(seed + offset, count, profile)
        with tempfile.TemporaryDirectory(prefix="parity-corpus-") as folder:
            source, target = Path(folder) / "cases.jsonl", Path(folder) / "decided.jsonl"
            write_jsonl(source, cases)
            oracle(profile.newest_release, source, target)
            decided = read_jsonl(target)
        path = CORPUS_DIR / f"openjiuwen-{profile.newest_release}.jsonl.gz"
        write_jsonl(path, decided)
        print(f"{path}: {len(decided)} cases", flush=True)


def scenarios(releases: list[str], target: Path) -> None:
    """Record every release's dumps and debug logs for the scripted scenarios."""
    from parity_live.scenarios import record  # needs tests.servers (the fake server)

    for release in releases:
        folder = target / release
        if folder.exists():
            shutil.rmtree(folder)
        for line in record(release, folder):
            print(line[:160], flush=True)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        prog="python -m parity_live", description=__doc__.splitlines()[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_live = sub.add_parser("live")
    p_live.add_argument("--releases", nargs="*", default=list(ALL_RELEASES))
    p_live.add_argument("--count", type=int, default=600)
    p_live.add_argument("--seed", type=int)
    p_live.add_argument("-v", "--verbose", action="store_true")
    p_gen = sub.add_parser("generate")
    p_gen.add_argument("--seed", type=int, required=True)
    p_gen.add_argument("--count", type=int, default=600)
    p_gen.add_argument("out", type=Path)
    p_oracle = sub.add_parser("oracle")
    p_oracle.add_argument("release")
    p_oracle.add_argument("source", type=Path)
    p_oracle.add_argument("target", type=Path)
    p_cmp = sub.add_parser("compare")
    p_cmp.add_argument("files", nargs="+", type=Path)
    p_cmp.add_argument("-v", "--verbose", action="store_true")
    p_corpus = sub.add_parser("corpus")
    p_corpus.add_argument("--count", type=int, default=600)
    p_corpus.add_argument("--seed", type=int, default=12)
    p_scn = sub.add_parser("scenarios")
    p_scn.add_argument("--releases", nargs="*", default=list(ALL_RELEASES))
    p_scn.add_argument("--out", type=Path, default=CORPUS_DIR / "artifacts")
    args = parser.parse_args(argv)
    if args.command == "live":
        return 0 if live(args.releases, args.count, args.seed, args.verbose) else 1
    if args.command == "generate":
        write_jsonl(args.out, generate(args.seed, args.count))
        return 0
    if args.command == "oracle":
        oracle(args.release, args.source, args.target)
        return 0
    if args.command == "compare":
        return 0 if compare(args.files, args.verbose) else 1
    if args.command == "scenarios":
        scenarios(args.releases, args.out)
        return 0
    corpus(args.count, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
