#!/usr/bin/env python3
"""One run of wire-capture.sh, against the packets: the mock's truth and the client's TTFT held against what tcpdump saw
on loopback. Prints one JSON object (the figures of the README's table).

Usage: bench/benchmark-client/wire_capture.py CAPTURE.pcap RESULT.json DETAIL.jsonl TRUTH.jsonl

Per request of the run (the client's per-request file, matched by the x-request-id bench sends and the mock keeps):
- request packet: the first packet of the POST on its connection (client to server);
- first-token packet: the first packet of the response carrying generated text ("text" or "content" in a data: line);
- truth: the mock's truth-log row of that request id (received_ms, first_token_written_ms, first_token_ms).
Figures (ms): the truth's written first-token instant against its packet (wire minus truth), the planned first token
against the same packet, the mock's received instant against the request packet (and the share of requests whose
received_lateness_ms, with 0.05 ms for the capture's own timestamps, covers it), the client's TTFT error against the
truth (client TTFT minus first_token_written_ms - received_ms) and against the wire (client TTFT minus first-token
packet minus request packet), beside the client's own estimate of its p99.
"""
import json
import struct
import sys


def packets(path):
    """(epoch seconds, src, sport, dst, dport, payload) of each IPv4 TCP packet with a payload."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic == 0xA1B2C3D4:
        endian, scale = "<", 1e-6
    elif magic == 0xA1B23C4D:
        endian, scale = "<", 1e-9
    elif magic == 0xD4C3B2A1:
        endian, scale = ">", 1e-6
    elif magic == 0x4D3CB2A1:
        endian, scale = ">", 1e-9
    else:
        raise SystemExit(f"{path}: not a pcap file")
    link = struct.unpack(endian + "I", data[20:24])[0]
    offset = 24
    while offset + 16 <= len(data):
        sec, frac, incl, _ = struct.unpack(endian + "IIII", data[offset:offset + 16])
        frame = data[offset + 16:offset + 16 + incl]
        offset += 16 + incl
        if link == 1:  # Ethernet (Linux loopback)
            if len(frame) < 14 or frame[12:14] != b"\x08\x00":
                continue
            ip = frame[14:]
        elif link == 113:  # Linux cooked capture
            ip = frame[16:]
        else:
            ip = frame
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 6:
            continue
        ihl = (ip[0] & 0xF) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        tcp = ip[ihl:total]
        sport, dport = struct.unpack(">HH", tcp[:4])
        payload = tcp[(tcp[12] >> 4) * 4:]
        if payload:
            yield sec + frac * scale, ip[12:16], sport, ip[16:20], dport, payload


def requests_on_the_wire(path, port):
    """x-request-id -> (request packet time, first-token packet time), epoch seconds."""
    sent = {}  # connection -> (request id, time of its POST) being answered
    found = {}
    for t, src, sport, dst, dport, payload in packets(path):
        if dport == port:
            conn = (src, sport)
            if payload.startswith(b"POST "):
                rid = None
                for line in payload.split(b"\r\n"):
                    if line.lower().startswith(b"x-request-id:"):
                        rid = line.split(b":", 1)[1].strip().decode()
                sent[conn] = (rid, t)
        elif sport == port:
            conn = (dst, dport)
            rid, at = sent.get(conn, (None, None))
            if rid is not None and rid not in found and (b'"text":"' in payload or b'"content":"' in payload):
                found[rid] = (at, t)
    return found


def pct(values, p):
    """The p-th percentile, nearest rank (as the client's LatencyStats reports it)."""
    if not values:
        return None
    v = sorted(values)
    k = max(0, min(len(v) - 1, int(-(-p * len(v) // 100)) - 1))
    return v[k]


def summary(values):
    return {"n": len(values), "p50": pct(values, 50), "p99": pct(values, 99), "max": max(values) if values else None}


def main():
    capture, result_file, detail_file, truth_file = sys.argv[1:5]
    result = json.load(open(result_file))
    port = int(result["infersim_base_url"].rsplit(":", 1)[1].split("/")[0])
    wire = requests_on_the_wire(capture, port)
    truth = {}
    for line in open(truth_file):
        if line.strip():
            row = json.loads(line)
            if row.get("index", 0) == 0:
                truth[row["request_id"]] = row["wall"]
    written_vs_wire, planned_vs_wire, received_vs_wire, client_error = [], [], [], []
    read_bound_covers, client_error_vs_truth = [], []
    for line in open(detail_file):
        r = json.loads(line)
        rid = r.get("request_id")
        if r.get("warmup") or "ttft_ms" not in r or rid not in wire:
            continue
        at_request, at_first = wire[rid]
        client_error.append(r["ttft_ms"] - (at_first - at_request) * 1e3)
        w = truth.get(rid)
        if w and w.get("first_token_written_ms") is not None:
            written_vs_wire.append(at_first * 1e3 - w["first_token_written_ms"])
            planned_vs_wire.append(at_first * 1e3 - w["first_token_ms"])
            received_vs_wire.append(w["received_ms"] - at_request * 1e3)
            if w.get("received_lateness_ms") is not None:
                read_bound_covers.append(w["received_lateness_ms"] + 0.05 >= received_vs_wire[-1])
            client_error_vs_truth.append(r["ttft_ms"] - (w["first_token_written_ms"] - w["received_ms"]))
    timing = (result.get("infersim_validity") or {}).get("timing") or {}
    estimate = timing.get("ttft_error_p99_ms")
    measured = pct([abs(e) for e in client_error], 99)
    print(json.dumps({
        "requests": len(client_error),
        "truth_first_token_written_to_wire_ms": summary(written_vs_wire),
        "truth_first_token_planned_to_wire_ms": summary(planned_vs_wire),
        "truth_received_after_request_packet_ms": summary(received_vs_wire),
        "truth_read_bound_covers_share": sum(read_bound_covers) / len(read_bound_covers) if read_bound_covers else None,
        "client_ttft_error_vs_wire_ms": summary(client_error),
        "client_ttft_error_vs_truth_ms": summary(client_error_vs_truth),
        "client_self_estimate_p99_ms": estimate,
        "client_read_delay_ms": result.get("infersim_read_delay_ms"),
        "self_estimate_bounds_measured_p99": None if estimate is None or measured is None else estimate >= measured,
    }))


if __name__ == "__main__":
    main()
