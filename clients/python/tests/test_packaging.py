"""The build backend (backend/kairos_backend.py): the wheel holds the package and a RECORD
that matches it, the sdist builds the same wheel, and builds are reproducible. `make
test-python` installs the package with pip into a fresh venv before running these tests."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import re
import sys
import tarfile
import tempfile
import unittest
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_backend(root: Path):
    spec = importlib.util.spec_from_file_location(f"kairos_backend_{abs(hash(root))}", root / "backend" / "kairos_backend.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class BackendTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = Path(self.tmp.name)
        self.backend = load_backend(ROOT)

    def tearDown(self) -> None:
        self.tmp.cleanup()

    def test_wheel_holds_the_package_and_a_matching_record(self) -> None:
        name = self.backend.build_wheel(str(self.dir))
        self.assertEqual(name, "kairos_client-0.1.0-py3-none-any.whl")
        with zipfile.ZipFile(self.dir / name) as z:
            names = set(z.namelist())
            want = {"kairos/" + f.relative_to(ROOT / "src" / "kairos").as_posix()
                    for f in (ROOT / "src" / "kairos").rglob("*") if f.is_file() and "__pycache__" not in f.parts}
            self.assertIn("kairos/py.typed", want)
            self.assertEqual({n for n in names if n.startswith("kairos/")}, want)
            record = z.read("kairos_client-0.1.0.dist-info/RECORD").decode().splitlines()
            self.assertEqual({r.split(",")[0] for r in record}, names)
            for row in record:
                path, digest, size = row.split(",")
                if path.endswith("RECORD"):
                    self.assertEqual((digest, size), ("", ""))
                    continue
                data = z.read(path)
                self.assertEqual(size, str(len(data)), path)
                self.assertEqual(digest, "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode(), path)
            meta = z.read("kairos_client-0.1.0.dist-info/METADATA").decode()
            self.assertIn("\nName: kairos-client\n", meta)
            self.assertIn("\nVersion: 0.1.0\n", meta)
            self.assertIn("\nRequires-Python: >=3.8\n", meta)
            self.assertNotIn("Requires-Dist", meta)  # standard library only
            self.assertIn("Root-Is-Purelib: true", z.read("kairos_client-0.1.0.dist-info/WHEEL").decode())

    def test_version_is_one_number(self) -> None:
        text = (ROOT / "src" / "kairos" / "_version.py").read_text()
        m = re.search(r'__version__ = "([^"]+)"', text)
        assert m is not None, text
        self.assertEqual(m.group(1), self.backend.project()["version"])

    def test_project_fields_without_tomllib_match_tomllib(self) -> None:
        fields = self.backend._project_fields((ROOT / "pyproject.toml").read_text())
        if sys.version_info >= (3, 11):
            self.assertEqual(fields, self.backend.project())
        for key in ("name", "version", "description", "requires-python"):
            self.assertIn(key, fields)

    def test_sdist_builds_the_same_wheel_and_builds_are_reproducible(self) -> None:
        sdist = self.backend.build_sdist(str(self.dir))
        self.assertEqual(sdist, "kairos_client-0.1.0.tar.gz")
        with tarfile.open(self.dir / sdist) as tar:
            if hasattr(tarfile, "data_filter"):  # 3.12+, and security releases of older ones
                tar.extractall(self.dir / "unpacked", filter="data")  # type: ignore[call-arg]
            else:
                tar.extractall(self.dir / "unpacked")
        root = self.dir / "unpacked" / "kairos_client-0.1.0"
        for rel in ("PKG-INFO", "pyproject.toml", "README.md", "backend/kairos_backend.py", "src/kairos/client.py"):
            self.assertTrue((root / rel).is_file(), rel)
        (self.dir / "a").mkdir()
        (self.dir / "b").mkdir()
        wa = self.backend.build_wheel(str(self.dir / "a"))
        wb = load_backend(root).build_wheel(str(self.dir / "b"))
        self.assertEqual(wa, wb)
        self.assertEqual((self.dir / "a" / wa).read_bytes(), (self.dir / "b" / wb).read_bytes())

    def test_editable_wheel_points_at_src(self) -> None:
        name = self.backend.build_editable(str(self.dir))
        with zipfile.ZipFile(self.dir / name) as z:
            pth = [n for n in z.namelist() if n.endswith(".pth")]
            self.assertEqual(len(pth), 1)
            self.assertEqual(z.read(pth[0]).decode().strip(), str((ROOT / "src").resolve()))


if __name__ == "__main__":
    unittest.main()
