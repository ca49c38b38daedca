"""A Python tool's own code: loading its function, and what its exceptions mean as codes.

Kept apart from the adapter so that a process-isolation worker can import it alone: it needs
neither asyncio nor pydantic, and a worker starts in a fraction of the time.

A target is `"package.module:function"` or `"path/to/file.py:function"` (relative to the
registry file's folder). A registry's own modules load in a package made for its folder, never
on `sys.path`.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import sys
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolcaller.errors import (
    ExecutionError,
    InvalidParamsError,
    ToolCallError,
    ToolTimeoutError,
)

__all__ = ["PROGRAMMING_ERRORS", "load_callable", "translate_exception"]

TRACEBACK_CHARS = 4_000
PROGRAMMING_ERRORS: tuple[type[BaseException], ...] = (
    TypeError, AttributeError, NameError, ImportError, SyntaxError, NotImplementedError)
"""A Python tool's bugs: permanent by default (SPEC rule 4), since retrying a bug only makes
the user wait. A tool can choose its own with `Tool.permanent_errors`."""


def translate_exception(exc: BaseException,
                        permanent: tuple[type[BaseException], ...] | None = None) -> ToolCallError:
    """Map an exception raised by a tool's own code to a contract error.

    Exceptions of the `permanent` types (default: `PROGRAMMING_ERRORS`) are not retried.
    """
    if isinstance(exc, ToolCallError):
        return exc
    if isinstance(exc, TimeoutError):
        return ToolTimeoutError(f"the tool raised TimeoutError: {exc}", details=_trace(exc))
    if isinstance(exc, TypeError) and _is_signature_mismatch(exc):
        return InvalidParamsError(f"the params do not fit the function: {exc}")
    text = str(exc)
    name = type(exc).__name__
    message = f"{name}: {text}" if text else name
    is_permanent = isinstance(exc, PROGRAMMING_ERRORS if permanent is None else permanent)
    if is_permanent:
        message += " (a programming error: not retried)"
    return ExecutionError(message, details=_trace(exc), permanent=is_permanent)


def _is_signature_mismatch(exc: TypeError) -> bool:
    # A TypeError raised by the call itself has no frame inside the tool's code.
    tb = exc.__traceback__
    depth = 0
    while tb is not None:
        depth += 1
        tb = tb.tb_next
    text = str(exc)
    return depth <= 2 and ("argument" in text or "positional" in text)


def _trace(exc: BaseException) -> dict[str, Any]:
    """A stack summary of the tool's own frames, innermost last (the engine's are left out)."""
    frames = [
        f"{frame.filename}:{frame.lineno} in {frame.name}: {(frame.line or '').strip()}"
        for frame in traceback.extract_tb(exc.__traceback__)
        if not frame.filename.replace("\\", "/").endswith(_ENGINE_FRAMES)
    ][-8:]
    text = "\n".join(frames)
    if len(text) > TRACEBACK_CHARS:
        frames = ["…", *(f[-TRACEBACK_CHARS // 8:] for f in frames)]
    return {"type": type(exc).__qualname__, "stack": frames}


_ENGINE_FRAMES = ("toolcaller/adapters/threads.py", "toolcaller/adapters/python.py",
                  "toolcaller/adapters/python_code.py",
                  "toolcaller/adapters/process.py", "toolcaller/adapters/_worker.py",
                  "concurrent/futures/thread.py", "contextvars")


def load_callable(spec: str, base_dir: Path | None = None) -> Callable[..., Any]:
    """Import `"module:attr"` or `"path/file.py:attr"`; `ExecutionError` (permanent) if it fails."""
    module_part, sep, attr_path = str(spec).rpartition(":")
    if not sep or not module_part or not attr_path:
        raise ExecutionError(
            f"python target {spec!r} is not of the form 'module:function'", permanent=True
        )
    try:
        module = _import(module_part, base_dir)
        obj: Any = module
        for attr in attr_path.split("."):
            obj = getattr(obj, attr)
    except ToolCallError:
        raise
    except Exception as exc:
        raise ExecutionError(
            f"cannot load python target {spec!r}: {type(exc).__name__}: {exc}"
            f"{_sibling_hint(exc, base_dir)}", permanent=True
        ) from exc
    if not callable(obj):
        raise ExecutionError(f"python target {spec!r} is not callable", permanent=True)
    return obj  # type: ignore[no-any-return]


def _import(module_part: str, base_dir: Path | None) -> Any:
    if module_part.endswith(".py"):
        path = Path(module_part)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        return _load_file(path)
    if base_dir is None or _is_installed(module_part) or not _is_beside(module_part, base_dir):
        return importlib.import_module(module_part)
    # A registry's own module loads inside a package made for its folder, never under its
    # bare name: two registries' `tools.py` stay two modules, nothing joins `sys.path`, and
    # the module reaches its siblings with `from . import helpers`.
    return importlib.import_module(f"{_folder_package(base_dir)}.{module_part}")


def _load_file(path: Path) -> Any:
    resolved = path.resolve()
    # In its folder's package, like a "module:function" target: the same file is one module
    # whichever way it is named, and `from . import helpers` works in it.
    name = (f"{_folder_package(resolved.parent)}.{resolved.stem}" if resolved.stem.isidentifier()
            else f"toolcaller_user_{_digest(resolved)}")
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ExecutionError(f"cannot load {str(path)!r}", permanent=True)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _sibling_hint(exc: Exception, base_dir: Path | None) -> str:
    missing = exc.name if isinstance(exc, ModuleNotFoundError) else None
    if not missing or base_dir is None or not _is_beside(missing, base_dir):
        return ""
    return (f" ({missing!r} sits beside the registry but is not on sys.path: import it "
            f"relatively, `from . import {missing.partition('.')[0]}`)")


def _is_installed(module_part: str) -> bool:
    """Say whether the module's top package is importable already (it wins over a registry's)."""
    try:
        return importlib.util.find_spec(module_part.partition(".")[0]) is not None
    except (ImportError, ValueError):
        return False


def _is_beside(module_part: str, folder: Path) -> bool:
    top = module_part.partition(".")[0]
    return importlib.machinery.PathFinder.find_spec(top, [str(folder)]) is not None


_FOLDERS_LOCK = threading.Lock()


def _folder_package(folder: Path) -> str:
    """Name a package, made on first use, whose modules are the files of `folder`."""
    resolved = folder.resolve()
    name = f"toolcaller_registry_{_digest(resolved)}"
    with _FOLDERS_LOCK:
        if name not in sys.modules:
            spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
            spec.submodule_search_locations = [str(resolved)]
            sys.modules[name] = importlib.util.module_from_spec(spec)
    return name


def _digest(path: Path) -> str:
    # Not hash(): that differs between processes, and a child process must give a module the
    # same name as its parent did, or the parent cannot unpickle the module's objects.
    return hashlib.blake2b(str(path).encode(), digest_size=8).hexdigest()
