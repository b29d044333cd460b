package dev.infersim.server;

import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ArrayValue;
import org.msgpack.value.MapValue;
import org.msgpack.value.Value;

import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A KV-event decoder written from vLLM's published msgspec structs ({@code vllm-project/vllm@9aaf83ef5},
 * {@code vllm/distributed/kv_events.py}) and msgspec's rules, not from infersim's encoder: {@code KVEventBatch} is
 * {@code array_like} ({@code [ts, events, data_parallel_rank]}); each event is a tagged struct (tag field "type", the
 * class name) either as an array {@code [tag, field...]} in declaration order or as a map keyed by field name with the
 * tag under "type"; a field missing from either form takes its declared default, and a field without a default must be
 * there. Values come out as plain Java: lists, maps, {@link BigInteger} for integers (a hash may exceed 2^63), strings,
 * doubles and null.
 */
public final class VllmKvEventDecoder {
    /** A struct's fields in declaration order; those from index {@code firstDefaulted} on default to None. */
    private record Struct(List<String> fields, int firstDefaulted) {
    }

    private static final Map<String, Struct> STRUCTS = Map.of(
            "BlockStored", new Struct(List.of("block_hashes", "parent_block_hash", "token_ids", "block_size", "lora_id",
                    "medium", "lora_name", "extra_keys", "group_idx", "kv_cache_spec_kind", "kv_cache_spec_sliding_window"), 7),
            "BlockRemoved", new Struct(List.of("block_hashes", "medium", "group_idx"), 2),
            "AllBlocksCleared", new Struct(List.of(), 0));

    /** One decoded batch. */
    public record Batch(double ts, List<Map<String, Object>> events, Integer dataParallelRank, boolean mapEvents) {
    }

    private VllmKvEventDecoder() {
    }

    /** Decodes a message's third frame; each event's map has "type" and every field of its struct. */
    public static Batch decode(byte[] payload) throws IOException {
        try (MessageUnpacker in = MessagePack.newDefaultUnpacker(payload)) {
            ArrayValue batch = in.unpackValue().asArrayValue();
            if (in.hasNext()) {
                throw new IOException("bytes after the batch");
            }
            if (batch.size() < 2 || batch.size() > 3) {
                throw new IOException("KVEventBatch has 2 or 3 fields, got " + batch.size());
            }
            double ts = batch.get(0).asFloatValue().toDouble();
            List<Map<String, Object>> events = new ArrayList<>();
            boolean maps = false;
            for (Value v : batch.get(1).asArrayValue()) {
                maps = v.isMapValue();
                events.add(v.isMapValue() ? fromMap(v.asMapValue()) : fromArray(v.asArrayValue()));
            }
            Object rank = batch.size() == 3 ? plain(batch.get(2)) : null;
            return new Batch(ts, events, rank == null ? null : ((BigInteger) rank).intValueExact(), maps);
        }
    }

    private static Map<String, Object> fromArray(ArrayValue a) throws IOException {
        String type = a.get(0).asStringValue().asString();
        Struct s = struct(type);
        if (a.size() - 1 < s.firstDefaulted() || a.size() - 1 > s.fields().size()) {
            throw new IOException(type + " array of " + (a.size() - 1) + " fields");
        }
        Map<String, Object> event = new LinkedHashMap<>();
        event.put("type", type);
        for (int i = 0; i < s.fields().size(); i++) {
            event.put(s.fields().get(i), i + 1 < a.size() ? plain(a.get(i + 1)) : null);
        }
        return event;
    }

    private static Map<String, Object> fromMap(MapValue m) throws IOException {
        Map<String, Object> raw = new LinkedHashMap<>();
        for (Map.Entry<Value, Value> e : m.entrySet()) {
            raw.put(e.getKey().asStringValue().asString(), plain(e.getValue()));
        }
        String type = (String) raw.remove("type");
        Struct s = struct(type);
        Map<String, Object> event = new LinkedHashMap<>();
        event.put("type", type);
        for (int i = 0; i < s.fields().size(); i++) {
            String field = s.fields().get(i);
            if (!raw.containsKey(field) && i < s.firstDefaulted()) {
                throw new IOException(type + " map lacks the required field " + field);
            }
            event.put(field, raw.remove(field));
        }
        if (!raw.isEmpty()) {
            throw new IOException(type + " map has unknown fields " + raw.keySet());
        }
        return event;
    }

    private static Struct struct(String type) throws IOException {
        Struct s = STRUCTS.get(type);
        if (s == null) {
            throw new IOException("unknown event type " + type);
        }
        return s;
    }

    private static Object plain(Value v) {
        switch (v.getValueType()) {
            case NIL:
                return null;
            case INTEGER:
                return v.asIntegerValue().asBigInteger();
            case FLOAT:
                return v.asFloatValue().toDouble();
            case STRING:
                return v.asStringValue().asString();
            case BINARY:
                return v.asBinaryValue().asByteArray();
            case BOOLEAN:
                return v.asBooleanValue().getBoolean();
            case ARRAY:
                List<Object> list = new ArrayList<>();
                for (Value e : v.asArrayValue()) {
                    list.add(plain(e));
                }
                return list;
            default:
                Map<Object, Object> map = new LinkedHashMap<>();
                for (Map.Entry<Value, Value> e : v.asMapValue().entrySet()) {
                    map.put(plain(e.getKey()), plain(e.getValue()));
                }
                return map;
        }
    }
}
