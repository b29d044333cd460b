#!/usr/bin/env python3
"""A gRPC client of vLLM's engine service (vllm.grpc.engine.VllmEngine) written with grpcio, a foreign HTTP/2 stack.

Usage: vllm_engine_client.py TARGET DESCRIPTOR_FILE ACTION [ARGS]
  TARGET           host:port of the server
  DESCRIPTOR_FILE  the service's FileDescriptorProto, serialized (no protoc needed here)
  ACTION           stream ID N | unary ID N | cancel ID N K | abort ID N | info | bad
Prints one JSON object: what came back, each response with the Unix time (s) it arrived.
"""
import json
import sys
import threading
import time

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PACKAGE = "vllm.grpc.engine"
SERVICE = "/" + PACKAGE + ".VllmEngine/"


def load_messages(path):
    proto = descriptor_pb2.FileDescriptorProto.FromString(open(path, "rb").read())
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    factory = message_factory.MessageFactory(pool)

    def cls(name):
        descriptor = pool.FindMessageTypeByName(PACKAGE + "." + name)
        if hasattr(message_factory, "GetMessageClass"):
            return message_factory.GetMessageClass(descriptor)
        return factory.GetPrototype(descriptor)
    return cls


def response_json(r):
    kind = r.WhichOneof("response")
    body = getattr(r, kind)
    out = {"kind": kind, "at": time.time(), "index": body.index, "prompt_tokens": body.prompt_tokens,
           "completion_tokens": body.completion_tokens, "cached_tokens": body.cached_tokens}
    if kind == "chunk":
        out["token_ids"] = list(body.token_ids)
    else:
        out["token_ids"] = list(body.output_ids)
        out["finish_reason"] = body.finish_reason
    return out


def main():
    target, descriptor, action = sys.argv[1], sys.argv[2], sys.argv[3]
    args = sys.argv[4:]
    m = load_messages(descriptor)
    channel = grpc.insecure_channel(target)
    call = lambda name, req, resp: channel.unary_unary(SERVICE + name, request_serializer=req.SerializeToString,
                                                       response_deserializer=resp.FromString)
    generate = channel.unary_stream(SERVICE + "Generate", request_serializer=m("GenerateRequest").SerializeToString,
                                    response_deserializer=m("GenerateResponse").FromString)

    def request(request_id, max_tokens, stream):
        r = m("GenerateRequest")(request_id=request_id, stream=stream)
        r.tokenized.input_ids.extend([9906, 1917, 11, 420, 374, 264, 1296, 13])
        r.tokenized.original_text = "Hello world, this is a test."
        r.sampling_params.max_tokens = max_tokens
        r.sampling_params.ignore_eos = True
        return r

    result = {}
    if action in ("stream", "unary"):
        sent = time.time()
        result["sent_at"] = sent
        result["responses"] = [response_json(r) for r in generate(request(args[0], int(args[1]), action == "stream"))]
    elif action == "cancel":
        responses = generate(request(args[0], int(args[1]), True))
        got = []
        for r in responses:
            got.append(response_json(r))
            if len(got) == int(args[2]):
                responses.cancel()
                break
        result["responses"] = got
        try:
            for r in responses:
                got.append(response_json(r))
        except grpc.RpcError as e:
            result["code"] = e.code().name
    elif action == "abort":
        responses = generate(request(args[0], int(args[1]), True))
        got = []
        first = threading.Event()

        def read():
            try:
                for r in responses:
                    got.append(response_json(r))
                    first.set()
                result["code"] = "OK"
            except grpc.RpcError as e:
                result["code"] = e.code().name
            first.set()
        reader = threading.Thread(target=read)
        reader.start()
        first.wait(30)
        abort = m("AbortRequest")()
        abort.request_ids.append(args[0])
        call("Abort", m("AbortRequest"), m("AbortResponse"))(abort, timeout=30)
        reader.join(30)
        result["responses"] = got
    elif action == "info":
        health = call("HealthCheck", m("HealthCheckRequest"), m("HealthCheckResponse"))(m("HealthCheckRequest")(), timeout=30)
        model = call("GetModelInfo", m("GetModelInfoRequest"), m("GetModelInfoResponse"))(m("GetModelInfoRequest")(), timeout=30)
        server = call("GetServerInfo", m("GetServerInfoRequest"), m("GetServerInfoResponse"))(m("GetServerInfoRequest")(), timeout=30)
        loads = call("GetLoads", m("GetLoadsRequest"), m("GetLoadsResponse"))(m("GetLoadsRequest")(), timeout=30)
        result = {"healthy": health.healthy, "message": health.message, "model_path": model.model_path,
                  "max_context_length": model.max_context_length, "served_model_name": model.served_model_name,
                  "is_generation": model.is_generation, "server_type": server.server_type,
                  "data_parallel_size": server.data_parallel_size, "dp_rank_count": loads.dp_rank_count,
                  "max_running_requests": loads.loads[0].max_running_requests, "version": loads.version}
    elif action == "bad":
        try:
            list(generate(request("too-long", 10 ** 9, True)))
            result["code"] = "OK"
        except grpc.RpcError as e:
            result["code"] = e.code().name
            result["details"] = e.details()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
