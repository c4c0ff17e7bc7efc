"""Checks that the lock files still say what pyproject.toml asks for.

Every install reads a lock, never pyproject.toml, so a dependency added or narrowed there without
`make lock` would silently not be installed. Each lock must pin every requirement of its groups
within range; the runtime lock must not carry the build extra (the code generator stays out of the
image); and the three locks must agree on each package they share.
"""

import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent


def pins(lock: Path) -> dict[NormalizedName, Version]:
    """The `name==version` lines of a pip-compile lock, by normalized name."""
    found: dict[NormalizedName, Version] = {}
    for line in lock.read_text().splitlines():
        if line[:1].isalnum() and "==" in line:
            name, version = line.split(" ", 1)[0].split("==")
            found[canonicalize_name(name)] = Version(version)
    return found


def unmet(requirements: list[str], locked: dict[NormalizedName, Version]) -> list[str]:
    """The requirements (for this interpreter and platform) that the pins leave unmet."""
    problems = []
    for text in requirements:
        requirement = Requirement(text)
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        version = locked.get(canonicalize_name(requirement.name))
        if version is None:
            problems.append(f"{text}: not locked")
        elif not requirement.specifier.contains(version, prereleases=True):
            problems.append(f"{text}: locked at {version}")
    return problems


def main() -> int:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime, extras = project["dependencies"], project["optional-dependencies"]
    locks = {
        "requirements.lock": runtime,
        "requirements-build.lock": extras["build"],
        "requirements-dev.lock": runtime + extras["build"] + extras["dev"],
    }
    locked = {name: pins(ROOT / name) for name in locks}
    problems = [f"{name}: {problem}" for name, groups in locks.items() for problem in unmet(groups, locked[name])]
    for text in extras["build"]:
        if canonicalize_name(Requirement(text).name) in locked["requirements.lock"]:
            problems.append(f"requirements.lock: carries {text}, a build-time tool")
    dev = locked["requirements-dev.lock"]
    for name in ("requirements.lock", "requirements-build.lock"):
        for package, version in locked[name].items():
            if dev.get(package) != version:
                problems.append(f"{name}: {package}=={version}, requirements-dev.lock: {dev.get(package)}")
    for problem in problems:
        sys.stderr.write(problem + "\n")
    if problems:
        sys.stderr.write("The lock files disagree with pyproject.toml: run `make lock`.\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
