"""Private per-row outcomes (`Track.row_outcomes`) as stored in `rows_v<N>.json`: packed columns.

A row-outcome dict holds one list per column (ids, 0/1 flags, small class codes, target F1 floats, a 2-D
flag matrix). As JSON lists that is ~200 bytes a row (80 kB for 400 VARM rows) and slow to decode; packed,
each numeric column is the base64 of its smallest exact numpy dtype, ~3x smaller and decoded at memory
speed. `unpack` gives back exactly the lists `row_outcomes` returned (same Python types and values), so
paired comparisons, tie groups and CIs are unchanged. Files written before (plain lists) load as they are.
"""

from __future__ import annotations

import base64

import numpy as np

FORMAT = "packed-columns-1"
_INT_DTYPES = (np.int8, np.int16, np.int32, np.int64)


def _smallest(array: np.ndarray) -> np.ndarray:
    """`array` (integers) in the smallest dtype that holds every value exactly."""
    if array.size == 0:
        return array.astype(np.int8)
    low, high = int(array.min()), int(array.max())
    for dtype in _INT_DTYPES:
        info = np.iinfo(dtype)
        if info.min <= low and high <= info.max:
            return array.astype(dtype)
    return array


def pack(rows: dict[str, list | np.ndarray]) -> dict:
    """The storable form of `rows`: string columns as lists, numeric ones as typed little-endian bytes
    (a column may be a numpy array of the values its list would hold: the same bytes)."""
    columns: dict[str, dict | list] = {}
    for key, values in rows.items():
        if isinstance(values, list) and values and isinstance(values[0], str):
            columns[key] = list(values)  # ids: what the test below gives them, without an array of them
            continue
        if isinstance(values, np.ndarray) and values.size == 0:
            values = values.tolist()  # as its list is stored: [] is a float column of shape [0]
        array = np.asarray(values)
        if array.dtype.kind in "US" or array.dtype == object or array.dtype.kind == "b":
            columns[key] = list(values)  # ids (and anything not plainly numeric) stay as they are
            continue
        kind = "float" if array.dtype.kind == "f" else "int"
        stored = array.astype("<f8") if kind == "float" else _smallest(array.astype(np.int64))
        stored = stored.astype(stored.dtype.newbyteorder("<"))
        columns[key] = {
            "kind": kind,
            "dtype": stored.dtype.str,
            "shape": list(array.shape),
            "data": base64.b64encode(stored.tobytes()).decode("ascii"),
        }
    return {"format": FORMAT, "columns": columns}


def unpack(stored: dict) -> dict[str, list]:
    """The row-outcome dict of a stored file, packed or (older files) plain lists."""
    return {key: v.tolist() if isinstance(v, np.ndarray) else v for key, v in unpack_arrays(stored).items()}


def unpack_arrays(stored: dict) -> dict[str, list | np.ndarray]:
    """`unpack` with the numeric columns as int64/float64 arrays (the same values), for a reader that
    turns them into arrays anyway (`Track.prepare_compare`): no Python list in between."""
    if stored.get("format") != FORMAT:
        return stored
    rows: dict[str, list | np.ndarray] = {}
    for key, column in stored["columns"].items():
        if isinstance(column, list):
            rows[key] = column
            continue
        array = np.frombuffer(base64.b64decode(column["data"]), dtype=np.dtype(column["dtype"]))
        array = array.reshape(column["shape"])
        rows[key] = array.astype(np.float64 if column["kind"] == "float" else np.int64)
    return rows
