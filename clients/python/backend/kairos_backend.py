"""The PEP 517 build backend of kairos-client, on the standard library only.

Why not setuptools: pip builds a project in an isolated environment and first installs the
backend named in pyproject.toml into it from the package index, so `pip install
./clients/python` with setuptools as the backend fails on a machine that cannot reach PyPI
("pip subprocess to install build dependencies did not run successfully"), although the venv
holds setuptools. A pure-Python package of a few modules is a wheel that any Python can zip:
this backend writes it (and the sdist, and the editable wheel of `pip install -e`), so the
client installs wherever pip and Python are, offline included.

It reads [project] of pyproject.toml (name, version, description, requires-python, license)
and packages every file under src/kairos/ but caches.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "kairos"
# Fixed file times make two builds of the same sources the same bytes ($SOURCE_DATE_EPOCH wins).
EPOCH = int(os.environ.get("SOURCE_DATE_EPOCH", "315532800"))  # 1980-01-01, the earliest a zip holds


def project() -> Dict[str, str]:
    """The string fields of pyproject.toml's [project] table."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    try:
        import tomllib  # Python 3.11+
    except ImportError:
        return _project_fields(text)
    table = tomllib.loads(text)["project"]
    return {k: v for k, v in table.items() if isinstance(v, str)}


def _project_fields(text: str) -> Dict[str, str]:
    """`key = "value"` lines of [project], for Pythons without tomllib (before 3.11)."""
    out: Dict[str, str] = {}
    section = ""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = line.strip("[] ")
            continue
        m = re.match(r'^([A-Za-z0-9_-]+)\s*=\s*"([^"\\]*)"\s*(#.*)?$', line)
        if section == "project" and m:
            out[m.group(1)] = m.group(2)
    return out


def _names() -> Tuple[str, str, str]:
    p = project()
    name, version = p["name"], p["version"]
    dist = re.sub(r"[-_.]+", "_", name).lower()
    return name, version, f"{dist}-{version}"


def metadata() -> str:
    """The METADATA (core metadata 2.1) of the distribution, the README as its description."""
    p = project()
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {p['name']}",
        f"Version: {p['version']}",
        f"Summary: {p.get('description', '')}",
    ]
    if "requires-python" in p:
        lines.append(f"Requires-Python: {p['requires-python']}")
    lic = p.get("license")
    if lic:
        lines.append(f"License: {lic}")
    lines.append("Description-Content-Type: text/markdown")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return "\n".join(lines) + "\n\n" + readme


def package_files() -> List[Path]:
    """The files of the package, sorted: everything under src/kairos but caches."""
    base = ROOT / "src" / PACKAGE
    return sorted(f for f in base.rglob("*") if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc")


class _Wheel:
    """A wheel being written: each file's hash goes into RECORD."""

    def __init__(self, path: Path, dist_info: str) -> None:
        self.zip = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
        self.dist_info = dist_info
        self.records: List[str] = []

    def add(self, arcname: str, data: bytes) -> None:
        info = zipfile.ZipInfo(arcname, date_time=_zip_time())
        info.external_attr = 0o644 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        self.zip.writestr(info, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        self.records.append(f"{arcname},sha256={digest},{len(data)}")

    def close(self) -> None:
        record = f"{self.dist_info}/RECORD"
        body = "\n".join(self.records + [f"{record},,"]) + "\n"
        info = zipfile.ZipInfo(record, date_time=_zip_time())
        info.external_attr = 0o644 << 16
        self.zip.writestr(info, body.encode())
        self.zip.close()


def _zip_time() -> Tuple[int, int, int, int, int, int]:
    import time

    t = time.gmtime(max(EPOCH, 315532800))
    return (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec)


def _dist_info_files(dist_info: str) -> Dict[str, bytes]:
    wheel = "Wheel-Version: 1.0\nGenerator: kairos_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    return {
        f"{dist_info}/METADATA": metadata().encode("utf-8"),
        f"{dist_info}/WHEEL": wheel.encode(),
        f"{dist_info}/top_level.txt": (PACKAGE + "\n").encode(),
    }


def _write_wheel(wheel_directory: str, files: Dict[str, bytes]) -> str:
    _, _, stem = _names()
    dist_info = f"{stem}.dist-info"
    filename = f"{stem}-py3-none-any.whl"
    w = _Wheel(Path(wheel_directory) / filename, dist_info)
    for arcname, data in files.items():
        w.add(arcname, data)
    for arcname, data in _dist_info_files(dist_info).items():
        w.add(arcname, data)
    w.close()
    return filename


# --- PEP 517 and PEP 660 hooks --------------------------------------------------------------


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_sdist(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def get_requires_for_build_editable(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    _, _, stem = _names()
    dist_info = f"{stem}.dist-info"
    d = Path(metadata_directory) / dist_info
    d.mkdir(parents=True, exist_ok=True)
    for arcname, data in _dist_info_files(dist_info).items():
        (Path(metadata_directory) / arcname).write_bytes(data)
    return dist_info


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None,
                metadata_directory: Optional[str] = None) -> str:
    src = ROOT / "src"
    return _write_wheel(wheel_directory, {f.relative_to(src).as_posix(): f.read_bytes() for f in package_files()})


def build_editable(wheel_directory: str, config_settings: Optional[Dict[str, Any]] = None,
                   metadata_directory: Optional[str] = None) -> str:
    """`pip install -e`: a wheel holding only a .pth file that puts src/ on sys.path."""
    _, _, stem = _names()
    pth = str((ROOT / "src").resolve()) + "\n"
    return _write_wheel(wheel_directory, {f"__editable__.{stem}.pth": pth.encode()})


def build_sdist(sdist_directory: str, config_settings: Optional[Dict[str, Any]] = None) -> str:
    """The source distribution: pyproject.toml, README.md, PKG-INFO, the backend and the package."""
    _, _, stem = _names()
    filename = f"{stem}.tar.gz"
    members: List[Tuple[str, bytes]] = [("PKG-INFO", metadata().encode("utf-8"))]
    for rel in ("pyproject.toml", "README.md", "backend/kairos_backend.py"):
        members.append((rel, (ROOT / rel).read_bytes()))
    members += [(f.relative_to(ROOT).as_posix(), f.read_bytes()) for f in package_files()]
    with tarfile.open(Path(sdist_directory) / filename, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel, data in members:
            info = tarfile.TarInfo(f"{stem}/{rel}")
            info.size, info.mtime, info.mode = len(data), EPOCH, 0o644
            tar.addfile(info, io.BytesIO(data))
    return filename
