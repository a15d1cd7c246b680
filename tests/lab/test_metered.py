"""A metered network, as URLSession's allowsExpensiveNetworkAccess = false means it: the real
daemon in the client namespace, whose default route goes out through the lab's link. Named as a
metered interface (`ferry session set '*' --metered-interfaces DEV`), it holds the session that
said `--no-metered` (nothing reaches nginx) while others download; named no more, the held one
starts and completes.
"""

from __future__ import annotations

import time

from ferry import Ferry
from lab import Lab, make_file, sha256


def test_a_metered_route_holds_the_sessions_that_wait_for_an_unmetered_one(www, tmp_path):
    big = make_file(www / "metered-big.bin", 1 << 20, seed=31)
    small = make_file(www / "metered-small.bin", 256 << 10, seed=32)
    lab = Lab(proxied=False, www=www).start()
    ferry = Ferry(lab, tmp_path / "ferry")
    try:
        assert any(lab.client_dev in route for route in lab.routes(lab.client) if route.startswith("default")), lab.routes(lab.client)
        ferry.cli("session", "set", "*", "--metered-interfaces", lab.client_dev)
        shown = ferry.cli("session", "set", "big", "--no-metered").stdout
        assert "metered network waits" in shown
        held = ferry.get(lab.url("metered-big.bin"), "--session", "big")
        free = ferry.get(lab.url("metered-small.bin"))
        ferry.wait_for(free, lambda t: t["state"] == "completed", 30, "the unconstrained download")
        time.sleep(1)
        assert ferry.transfer(held)["state"] == "queued"
        assert not lab.nginx_requests("/metered-big.bin"), "nothing of the held session went out"

        ferry.cli("session", "set", "*", "--clear", "meteredInterfaces")
        done = ferry.wait_for(held, lambda t: t["state"] == "completed", 30, "the held download once the route is unmetered")
        assert sha256(done["path"]) == sha256(big)
        assert sha256(ferry.transfer(free)["path"]) == sha256(small)
    finally:
        ferry.stop()
        lab.close()
