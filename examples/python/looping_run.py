"""A Python agent loop guarded by the loopguard service, with confluent-kafka and the schema
registry: it starts a run, keeps asking for the same search (a looping agent), and stops as soon
as the guard says so. Each step is an Avro request on loopguard.requests keyed by run id; the
answer is the decision with the same request_id on loopguard.decisions.

    pip install -r examples/python/requirements.txt
    KAFKA_BROKERS=localhost:9092 SCHEMA_REGISTRY_URL=http://localhost:8081 python examples/python/looping_run.py

Exit code 0 when the guard stopped the loop, 1 otherwise.
"""

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


registry = SchemaRegistryClient({"url": os.environ["SCHEMA_REGISTRY_URL"]})
# The workers register the schemas; a client writes with the latest registered version.
serialize = AvroSerializer(
    registry, schema("request.avsc"), conf={"auto.register.schemas": False, "use.latest.version": True}
)
deserialize = AvroDeserializer(registry, schema("decision.avsc"))

brokers = os.environ["KAFKA_BROKERS"]
# murmur2 is the partitioner of Kafka's Java client and of loopguard: a run's requests then
# share the partition number of its events, so the owning worker loads it with its partition.
producer = Producer({"bootstrap.servers": brokers, "enable.idempotence": True, "partitioner": "murmur2_random"})
consumer = Consumer(
    {
        "bootstrap.servers": brokers,
        "group.id": "loopguard-python-" + uuid.uuid4().hex,
        "enable.auto.commit": False,
        "isolation.level": "read_committed",
    }
)

# Follow every decisions partition from its current end, fixed before the first request goes out.
partitions = consumer.list_topics(DECISIONS, timeout=10).topics[DECISIONS].partitions
consumer.assign(
    [TopicPartition(DECISIONS, p, consumer.get_watermark_offsets(TopicPartition(DECISIONS, p), timeout=10)[1]) for p in partitions]
)

FIELDS = [f["name"] for f in json.loads(schema("request.avsc"))["fields"]]


def request(run_id, kind, **fields):
    """Publishes one request and waits for its decision; no decision in time fails closed."""
    req = {name: None for name in FIELDS}
    req.update(request_id=str(uuid.uuid4()), run_id=run_id, type=kind, sent_at_ms=int(time.time() * 1000), **fields)
    value = serialize(req, SerializationContext(REQUESTS, MessageField.VALUE))
    producer.produce(REQUESTS, key=run_id.encode(), value=value, headers={"loopguard.request_id": req["request_id"]})
    producer.flush(10)
    deadline = time.time() + TIMEOUT_S
    while time.time() < deadline:
        msg = consumer.poll(0.2)
        if msg is None or msg.error():
            continue
        d = deserialize(msg.value(), SerializationContext(DECISIONS, MessageField.VALUE))
        if d["request_id"] == req["request_id"]:
            if d["decision"] == "error":
                raise RuntimeError(f"{d['error_code']} ({d['error_field']}): {d['message']}")
            return req, d
    raise TimeoutError(f"no decision for {kind} within {TIMEOUT_S}s: do not run the tool")


def search(query):
    return {"results": [], "query": query}


def main():
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
    try:
        sys.exit(main())
    finally:
        consumer.close()
