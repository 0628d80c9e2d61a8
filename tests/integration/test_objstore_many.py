"""A bucket logdir of 1,000 runs and 10,000 objects (moto_server): found
by ListObjectsV2 pages with continuation tokens (10 pages), every run
loaded, and an unchanged reload costs ceil(10,000 / 1,000) = 10 list
requests and no GET or HEAD. Skips (77) without moto_server.

usage: test_objstore_many.py TFBOARD"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import s3_util  # noqa: E402
from tfb_server_util import Server, run_tests, wait_for  # noqa: E402
from test_objstore_events import events  # noqa: E402

s3_util.need_moto()
TFBOARD = sys.argv[1]
RUNS, PER_RUN = 1000, 10
MOTO = s3_util.Moto()
S3 = MOTO.client()
S3.create_bucket(Bucket="many")
s3_util.use_endpoint(MOTO.url)


def upload():
    body = events("loss", range(3))
    jobs = []
    for r in range(RUNS):
        run = "exp/run%04d" % r
        jobs.append((run + "/events.out.tfevents.1.h.1.0", body))
        for k in range(PER_RUN - 1):
            jobs.append((run + "/ckpt/part%d.bin" % k, b"x"))
    t0 = time.time()
    s3_util.put_many(MOTO.url, "many", jobs)
    print("uploaded %d objects in %.1f s" % (len(jobs), time.time() - t0))


def test_many_objects_cheap_reload():
    upload()
    with Server(TFBOARD, "s3://many/exp", "--reload_interval",
                "0.2") as srv:
        # 1,000 GETs to a moto_server that shares the machine with the
        # rest of the suite: more time than the usual deadline
        wait_for(lambda: srv.json("/data/plugin/core/progress")["done"],
                 "the first load", timeout=240)
        runs = srv.json("/data/runs")
        assert len(runs) == RUNS, len(runs)
        pts = srv.json("/data/plugin/scalars/scalars", run="run0999",
                       tag="loss")
        assert [p[1] for p in pts] == [0, 1, 2]
        first = srv.json("/data/environment")["storage"]
        # the first reload: 10 pages and one GET per event file
        r = srv.json("/data/plugin/core/progress")["reloads"]
        wait_for(lambda: srv.json("/data/plugin/core/progress")["reloads"]
                 >= r + 2, "two more reloads", timeout=120)
        st = srv.json("/data/environment")["storage"]
        last = st["last_reload"]
        print("first load: %s; an unchanged reload: %s"
              % (first["total"], last))
        assert last["lists"] == 10, last
        assert last["gets"] == 0 and last["heads"] == 0, last
        assert last["requests"] == 10, last
        assert first["total"]["gets"] == RUNS, first


try:
    run_tests([test_many_objects_cheap_reload])
finally:
    MOTO.stop()
