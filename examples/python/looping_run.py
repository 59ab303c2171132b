"""A Python agent loop guarded by the loopguard service, with confluent-kafka and the schema
registry: it starts a run, keeps asking for the same search (a looping agent), and stops as soon
as the guard says so. Each step is an Avro request on loopguard.requests keyed by run id; the
answer is the decision with the same run_id and request_id on loopguard.decisions.

    pip install -r examples/python/requirements.txt
    KAFKA_BROKERS=localhost:9092 SCHEMA_REGISTRY_URL=http://localhost:8081 python examples/python/looping_run.py

Exit code 0 when the guard stopped the loop, 1 otherwise.
"""

import hashlib
import hmac
import json
import os
import sys
import time
import uuid

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

SCHEMAS = os.path.join(os.path.dirname(__file__), "..", "..", "schemas", "service")
PREFIX = os.environ.get("LOOPGUARD_TOPIC_PREFIX", "")
REQUESTS = PREFIX + "loopguard.requests"
DECISIONS = PREFIX + "loopguard.decisions"
TIMEOUT_S = float(os.environ.get("LOOPGUARD_TIMEOUT_S", "30"))


def schema(name):
    with open(os.path.join(SCHEMAS, name), encoding="utf-8") as f:
        return f.read()


FIELDS = [f["name"] for f in json.loads(schema("request.avsc"))["fields"]]


def answers(decision, req):
    """A decision answers a request only when its run id AND its request id are the request's:
    request ids travel in the clear on loopguard.requests, so another client can publish one of
    ours on its own run, and its answer (an execute on a live run) must never run our tool."""
    return decision["run_id"] == req["run_id"] and decision["request_id"] == req["request_id"]


def js_number(x):
    """A number as JavaScript's JSON.stringify writes it (what the worker signs over)."""
    if isinstance(x, bool) or isinstance(x, int):
        return str(x).lower() if isinstance(x, bool) else str(x)
    if x == int(x) and abs(x) < 1e21:
        return str(int(x))
    digits, _, exp = repr(x).lstrip("-").partition("e")
    whole, _, frac = digits.partition(".")
    shift = int(exp or 0) + len(whole.lstrip("0") or "0")
    mantissa = (whole + frac).lstrip("0").rstrip("0") or "0"
    if whole.strip("0") == "":
        shift = int(exp or 0) - (len(frac) - len(frac.lstrip("0")))
    sign = "-" if x < 0 else ""
    k, n = len(mantissa), shift
    if k <= n <= 21:
        return sign + mantissa + "0" * (n - k)
    if 0 < n <= 21:
        return sign + mantissa[:n] + "." + mantissa[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + mantissa
    e = n - 1
    m = mantissa[0] + ("." + mantissa[1:] if k > 1 else "")
    return f"{sign}{m}e{'+' if e > 0 else '-'}{abs(e)}"


def js_json(v):
    """JSON as JavaScript's JSON.stringify writes it: no spaces, numbers as JavaScript prints them."""
    if v is None or isinstance(v, (bool, int, float)):
        return "null" if v is None else js_number(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(js_json(x) for x in v) + "]"
    raise TypeError(f"cannot sign a {type(v).__name__}")


def signed(req, key_id, secret):
    """The request signed with a tenant key (what a worker with --tenant-keys requires): HMAC-SHA256
    of every field but the signature, as JSON of the [name, value] pairs sorted by name. Its
    sent_at_ms is signed too, and a worker takes a signature only within 5 minutes of its clock and
    only once: sign each publish anew (request() stamps and signs every send, re-sends included)."""
    req = dict(req, key_id=key_id, signature=None)
    pairs = sorted((k, v) for k, v in req.items() if k != "signature")
    text = "loopguard-request-v1\n" + js_json([[k, v] for k, v in pairs])
    req["signature"] = hmac.new(secret.encode(), text.encode(), hashlib.sha256).hexdigest()
    return req


class Guard:
    """The connection to the loopguard service: a producer of requests, a follower of decisions."""

    def __init__(self):
        registry = SchemaRegistryClient({"url": os.environ["SCHEMA_REGISTRY_URL"]})
        # The workers register the schemas; a client writes with the latest registered version.
        self.serialize = AvroSerializer(
            registry, schema("request.avsc"), conf={"auto.register.schemas": False, "use.latest.version": True}
        )
        self.deserialize = AvroDeserializer(registry, schema("decision.avsc"))
        brokers = os.environ["KAFKA_BROKERS"]
        # murmur2 is the partitioner of Kafka's Java client and of loopguard: a run's requests then
        # share the partition number of its events, so the owning worker loads it with its partition.
        self.producer = Producer(
            {"bootstrap.servers": brokers, "enable.idempotence": True, "partitioner": "murmur2_random"}
        )
        self.consumer = Consumer(
            {
                "bootstrap.servers": brokers,
                "group.id": "loopguard-python-" + uuid.uuid4().hex,
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
            }
        )
        # Follow every decisions partition from its current end, fixed before the first request goes out.
        partitions = self.consumer.list_topics(DECISIONS, timeout=10).topics[DECISIONS].partitions
        self.consumer.assign(
            [
                TopicPartition(DECISIONS, p, self.consumer.get_watermark_offsets(TopicPartition(DECISIONS, p), timeout=10)[1])
                for p in partitions
            ]
        )

    def request(self, run_id, kind, request_id=None, **fields):
        """Publishes one request and waits for its decision; no decision in time fails closed.
        After a timeout, send the same request_id again: the worker answers it once."""
        req = {name: None for name in FIELDS}
        req.update(
            request_id=request_id or str(uuid.uuid4()), run_id=run_id, type=kind, sent_at_ms=int(time.time() * 1000), **fields
        )
        if os.environ.get("LOOPGUARD_KEY_ID"):
            req = signed(req, os.environ["LOOPGUARD_KEY_ID"], os.environ["LOOPGUARD_KEY_SECRET"])
        value = self.serialize(req, SerializationContext(REQUESTS, MessageField.VALUE))
        self.producer.produce(REQUESTS, key=run_id.encode(), value=value, headers={"loopguard.request_id": req["request_id"]})
        self.producer.flush(10)
        deadline = time.time() + TIMEOUT_S
        while time.time() < deadline:
            msg = self.consumer.poll(0.2)
            if msg is None or msg.error():
                continue
            d = self.deserialize(msg.value(), SerializationContext(DECISIONS, MessageField.VALUE))
            if answers(d, req):
                if d["decision"] == "error":
                    raise RuntimeError(f"{d['error_code']} ({d['error_field']}): {d['message']}")
                return req, d
        raise TimeoutError(f"no decision for {kind} within {TIMEOUT_S}s: do not run the tool")

    def close(self):
        self.consumer.close()


def search(query):
    return {"results": [], "query": query}


def main(guard):
    request = guard.request
    run_id = os.environ.get("LOOPGUARD_RUN_ID", "python-" + uuid.uuid4().hex[:8])
    request(run_id, "START_RUN", task_type="research")
    for step in range(1, 11):
        args = {"query": "weather in Paris"}  # the model keeps asking the same thing
        call, d = request(run_id, "TOOL_CALL", tool="search", args_json=json.dumps(args))
        print(f"step {step}: {d['decision']} {d['rule'] or ''}".rstrip(), flush=True)
        if d["decision"] != "execute":
            if d["status"] != "RUNNING":
                report = json.loads(d["report_json"] or "null")
                print(f"stopped: {d['status']} {d['rule']}: {d['message']}", flush=True)
                print("report: " + json.dumps(report, sort_keys=True), flush=True)
                return 0
            continue
        result = json.dumps(search(args["query"]))
        _, after = request(run_id, "TOOL_RESULT", call_id=call["request_id"], result_kind="SUCCESS", result_json=result)
        if after["status"] != "RUNNING":
            print(f"stopped: {after['status']} {after['rule']}: {after['message']}", flush=True)
            return 0
    print("the guard never stopped the loop", flush=True)
    return 1


if __name__ == "__main__":
    guard = Guard()
    try:
        sys.exit(main(guard))
    finally:
        guard.close()
