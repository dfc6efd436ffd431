"""A PEP 517 build backend of the standard library only, for `pip install ./python`: the package is
pure Python (it loads libcuview.so at import), so a wheel is its files, its metadata and a RECORD.
No download is ever needed to build it (pip's isolated build environment is empty)."""
import base64
import hashlib
import io
import os
import tarfile
import zipfile
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

ROOT = Path(__file__).resolve().parent.parent


def _project():
    text = (ROOT / "pyproject.toml").read_text()
    if tomllib is None:
        raise RuntimeError("building cuview's wheel needs Python 3.11 or newer (tomllib); this is older")
    return tomllib.loads(text)["project"]


def _metadata(p):
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}",
             f"Summary: {p['description']}", f"Requires-Python: {p.get('requires-python', '>=3')}"]
    licence = p.get("license", {})
    if isinstance(licence, dict) and "text" in licence:
        lines.append(f"License: {licence['text']}")
    for extra, reqs in p.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {r}; extra == "{extra}"' for r in reqs]
    readme = ROOT / p.get("readme", "README.md")
    if readme.exists():
        lines.append("Description-Content-Type: text/markdown")
        return "\n".join(lines) + "\n\n" + readme.read_text()
    return "\n".join(lines) + "\n"


def _files():
    for path in sorted((ROOT / "cuview").rglob("*.py")):
        yield path.relative_to(ROOT).as_posix(), path.read_bytes()


def _dist_info(p):
    return f"{p['name']}-{p['version']}.dist-info"


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    p = _project()
    d = Path(metadata_directory) / _dist_info(p)
    d.mkdir(parents=True, exist_ok=True)
    (d / "METADATA").write_text(_metadata(p))
    return d.name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    p = _project()
    name = f"{p['name']}-{p['version']}-py3-none-any.whl"
    info = _dist_info(p)
    entries = list(_files())
    entries.append((f"{info}/METADATA", _metadata(p).encode()))
    entries.append((f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: cuview_wheel\nRoot-Is-Purelib: true\n"
                    b"Tag: py3-none-any\n"))
    entries.append((f"{info}/top_level.txt", b"cuview\n"))
    record = [_record_line(n, d) for n, d in entries] + [f"{info}/RECORD,,"]
    with zipfile.ZipFile(Path(wheel_directory) / name, "w", zipfile.ZIP_DEFLATED) as whl:
        for n, d in entries:
            whl.writestr(zipfile.ZipInfo(n, date_time=(2026, 1, 1, 0, 0, 0)), d, zipfile.ZIP_DEFLATED)
        whl.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return name


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    base = f"{p['name']}-{p['version']}"
    name = f"{base}.tar.gz"
    with tarfile.open(Path(sdist_directory) / name, "w:gz") as tar:
        for rel in ["pyproject.toml", "README.md", "_build/cuview_wheel.py"] + [n for n, _ in _files()]:
            tar.add(ROOT / rel, arcname=f"{base}/{rel}")
        meta = f"{_metadata(p)}".encode()
        ti = tarfile.TarInfo(f"{base}/PKG-INFO")
        ti.size = len(meta)
        tar.addfile(ti, io.BytesIO(meta))
    return name
