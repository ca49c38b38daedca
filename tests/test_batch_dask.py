"""Batch calls on a Dask distributed cluster: rows run in worker processes, one frame comes back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from toolcaller import ToolCaller
from toolcaller.batch import OUTCOME_COLUMNS, amap_calls, map_calls

distributed = pytest.importorskip("distributed")

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def dask_executor() -> Iterator[Any]:
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True,
                                       host="127.0.0.1", dashboard_address=None,
                                       silence_logs=40)
    try:
        client = distributed.Client(cluster)
        try:
            yield client.get_executor()
        finally:
            client.close()
    finally:
        cluster.close()


@pytest.fixture
def caller() -> Iterator[ToolCaller]:
    made = ToolCaller()
    yield made
    made.close()


class TestDask:
    def test_map_over_a_dask_cluster(self, caller: ToolCaller, dask_executor: Any) -> None:
        """200 rows of math.add run on the cluster's workers and come back in order."""
        rows = [{"a": i, "b": 2 * i} for i in range(200)]
        frame = map_calls(caller, "math.add", rows, executor=dask_executor, concurrency=8,
                          progress=False)
        assert list(frame.columns) == ["a", "b", *OUTCOME_COLUMNS]
        assert frame["success"].all()
        assert [r["sum"] for r in frame["result"]] == [3 * i for i in range(200)]
        assert (frame["attempts"] == 1).all()
        workers = {e.metadata.call_id.rsplit("-", 1)[0] for e in frame.attrs["envelopes"]}
        assert caller._id_prefix not in workers
        # Which worker process holds each cached caller, asked of the workers themselves.
        cached = dask_executor._client.run(lambda: [
            c._id_prefix for c in __import__("toolcaller.batch.remote", fromlist=["_"])
            ._WORKER_CALLERS.values()])
        owner = {prefix: address for address, prefixes in cached.items() for prefix in prefixes}
        assert workers <= set(owner)  # every row ran in a caller cached on a worker
        assert len({owner[w] for w in workers}) == len(workers)  # one per worker process
        assert len(caller.history) == 200  # rows run remotely join the local history

    def test_failures_come_back_as_rows(self, caller: ToolCaller, dask_executor: Any) -> None:
        """Failing rows on the cluster are rows with their codes, like local ones."""
        rows = [{"a": 1, "b": 0}, {"a": 1, "b": 2}, {"a": "x", "b": 1}]
        frame = map_calls(caller, "math.divide", rows, executor=dask_executor, progress=False)
        assert frame["code"].tolist()[0] == "EXECUTION_ERROR"
        assert frame["code"].tolist()[2] == "INVALID_PARAMS"
        assert frame["result"].iloc[1] == {"quotient": 0.5}

    async def test_amap_with_the_dask_executor(self, caller: ToolCaller,
                                               dask_executor: Any) -> None:
        """`amap` awaits the cluster's futures without blocking the loop."""
        frame = await amap_calls(caller, "text.echo", [{"text": str(i)} for i in range(20)],
                                 executor=dask_executor, progress=False)
        assert frame["result"].map(lambda r: r["text"]).tolist() == [str(i) for i in range(20)]
