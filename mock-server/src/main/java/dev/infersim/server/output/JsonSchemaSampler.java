package dev.infersim.server.output;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.common.SplitMix64;
import dev.infersim.server.text.LoremVocabulary;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Generates one JSON value that validates against a JSON Schema, as a model under vLLM's structured outputs (guided
 * decoding) would emit it for a tool's {@code parameters} or a {@code response_format} schema. The draft 2020-12
 * keywords tools and structured outputs use are honoured: {@code type} (one or a list), {@code enum}, {@code const},
 * {@code properties} with {@code required} (optional ones drawn with probability 1/2, then up to
 * {@code minProperties}/{@code maxProperties}), {@code additionalProperties} as a schema, {@code items},
 * {@code prefixItems}, {@code minItems}/{@code maxItems}, {@code uniqueItems}, {@code contains}, {@code minLength}/
 * {@code maxLength}, {@code pattern} (through {@link RegexSampler}), {@code format} (date-time, date, time, email,
 * uri, uuid, ipv4, ipv6, hostname), {@code minimum}/{@code maximum} and both forms of their exclusive bounds,
 * {@code multipleOf}, {@code anyOf}/{@code oneOf} (one branch), {@code allOf} (merged), and local {@code $ref}s
 * ({@code #/$defs/...}, {@code #/definitions/...}, {@code #}).
 *
 * <p>Text is written as Python's {@code json.dumps} writes it ({@code ", "} between items, {@code ": "} after keys),
 * which is how vLLM re-serialises the arguments of a {@code required} tool call, so the arguments streamed and the
 * arguments of the final message are the same string. Every choice is drawn from {@link SplitMix64}, so a seed gives
 * the same value. A schema this generator cannot satisfy (a pattern it cannot read, a {@code $ref} outside the
 * document, recursion without a way out) is refused with {@link IllegalArgumentException} naming the keyword.
 *
 * <p>Bounded for schemas from a request: nesting at most {@value #HARD_DEPTH} levels (the generator recurses once per
 * level, {@code allOf} merges included), {@code $ref} chains at most {@value #MAX_REF_HOPS} hops, minimums at most
 * {@value #MAX_MINIMUM}, and every node visited and character written counts against the request's
 * {@link SamplingBudget}: a schema of {@code $ref}s doubling at each of 20 levels is refused within the budget's
 * million nodes instead of drawing a value of a million leaves.
 */
final class JsonSchemaSampler {
    /** Deeper than this, optional properties and array items beyond the minimum are left out so recursion ends. */
    private static final int MAX_DEPTH = 8;
    static final int HARD_DEPTH = 32;
    /** The longest chain of {@code $ref}s followed to reach a schema. */
    static final int MAX_REF_HOPS = 64;
    /** Items of an array without maxItems: at most this many past minItems. */
    private static final int SPARE_ITEMS = 3;
    /** The most items, properties or characters a schema may demand: a reply is a model's output, not a bulk export. */
    static final int MAX_MINIMUM = 4096;

    private final JsonNode root;
    private final SplitMix64 rng;
    private final LoremVocabulary words;
    private final SamplingBudget budget;
    /** The characters of the value the reply can reach: drawing stops past them (none while a unique item is drawn). */
    private long reach;
    /** Each pattern of the schema, parsed once however many strings it draws. */
    private final Map<String, RegexSampler.Compiled> patterns = new HashMap<>();

    private JsonSchemaSampler(JsonNode root, SplitMix64 rng, LoremVocabulary words, SamplingBudget budget, long reach) {
        this.root = root;
        this.rng = rng;
        this.words = words;
        this.budget = budget;
        this.reach = reach;
    }

    /** The JSON text of a value valid under {@code schema}; null or {@code true} means any value (an object here). */
    static String sample(JsonNode schema, long seed, LoremVocabulary words) {
        return sample(schema, seed, words, new SamplingBudget(), Long.MAX_VALUE);
    }

    /**
     * {@link #sample(JsonNode, long, LoremVocabulary)}, its work counted against a request's {@code budget}, and
     * drawn only as far as its first {@code reach} characters (and a little more): a reply cut by max_tokens never
     * shows the rest, and the same seed draws the same text up to there.
     */
    static String sample(JsonNode schema, long seed, LoremVocabulary words, SamplingBudget budget, long reach) {
        StringBuilder out = new StringBuilder(128);
        JsonSchemaSampler s = new JsonSchemaSampler(schema, new SplitMix64(seed), words, budget, reach);
        try {
            s.value(schema == null || schema.isBoolean() ? null : schema, out, 0);
        } catch (Reached past) {
            // the reply ends within what is drawn
        }
        return out.toString();
    }

    /** A small JSON object of lorem keys and values: what {@code response_format: json_object} asks for. */
    static String sampleObject(long seed, LoremVocabulary words) {
        StringBuilder out = new StringBuilder(96);
        new JsonSchemaSampler(null, new SplitMix64(seed), words, new SamplingBudget(), Long.MAX_VALUE).anyObject(out);
        return out.toString();
    }

    private void value(JsonNode schema, StringBuilder out, int depth) {
        budget.node();
        if (depth > HARD_DEPTH) {
            throw recursion();
        }
        if (schema == null || schema.isEmpty() && schema.isObject()) {
            anyObject(out);
            return;
        }
        if (schema.isBoolean()) {
            if (!schema.asBoolean()) {
                throw new IllegalArgumentException("the schema 'false' admits no value");
            }
            anyObject(out);
            return;
        }
        JsonNode s = resolve(schema);
        if (s.has("allOf")) {
            s = merge(s, depth);
        }
        if (s.has("const")) {
            literal(s.get("const"), out);
            return;
        }
        JsonNode e = s.get("enum");
        if (e != null && e.isArray() && !e.isEmpty()) {
            literal(e.get(below(e.size())), out);
            return;
        }
        JsonNode branches = s.has("anyOf") ? s.get("anyOf") : s.get("oneOf");
        if (branches != null && branches.isArray() && !branches.isEmpty()) {
            value(branches.get(below(branches.size())), out, depth + 1);
            return;
        }
        switch (type(s)) {
            case "object" -> object(s, out, depth);
            case "array" -> array(s, out, depth);
            case "string" -> string(s, out);
            case "integer" -> integer(s, out);
            case "number" -> number(s, out);
            case "boolean" -> put(out, rng.nextLong() < 0 ? "true" : "false");
            case "null" -> put(out, "null");
            default -> throw new IllegalArgumentException("unknown type '" + type(s) + "'");
        }
    }

    private static IllegalArgumentException recursion() {
        return new IllegalArgumentException("the schema recurses without a way to stop (over " + HARD_DEPTH + " levels)");
    }

    /** Follows local {@code $ref}s (JSON pointers into the root document). */
    private JsonNode resolve(JsonNode s) {
        for (int hops = 0; s.has("$ref"); hops++) {
            budget.node();
            String ref = s.get("$ref").asText();
            if (!ref.startsWith("#") || hops > MAX_REF_HOPS || root == null) {
                throw new IllegalArgumentException("$ref '" + ref + "' is not a reference inside the schema");
            }
            JsonNode target = ref.equals("#") ? root : root.at(ref.substring(1));
            if (target.isMissingNode()) {
                throw new IllegalArgumentException("$ref '" + ref + "' points at nothing");
            }
            s = target;
        }
        return s;
    }

    /**
     * {@code allOf} folded into one schema: properties and required united, other keywords the last one's. Copies
     * only the levels it changes (the schema itself, its properties and required), each field counted as a node.
     */
    private JsonNode merge(JsonNode s, int depth) {
        if (depth > HARD_DEPTH) {
            throw recursion();
        }
        ObjectNode merged = ((ObjectNode) s).objectNode();
        merged.setAll((ObjectNode) s);
        merged.remove("allOf");
        budget.nodes(s.size());
        copyLevel(merged, "properties");
        copyLevel(merged, "required");
        for (JsonNode part : s.get("allOf")) {
            JsonNode p = resolve(part);
            if (p.has("allOf")) {
                p = merge(p, depth + 1);
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = p.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> f = it.next();
                budget.nodes(1 + f.getValue().size());
                switch (f.getKey()) {
                    case "properties" -> {
                        ObjectNode props = merged.has("properties") ? (ObjectNode) merged.get("properties") : merged.putObject("properties");
                        props.setAll((ObjectNode) f.getValue());
                    }
                    case "required" -> {
                        ArrayNode req = merged.has("required") ? (ArrayNode) merged.get("required") : merged.putArray("required");
                        f.getValue().forEach(req::add);
                    }
                    default -> merged.set(f.getKey(), f.getValue());
                }
            }
        }
        return merged;
    }

    /** Replaces {@code merged}'s container {@code key} by a copy of its top level, which merging then changes. */
    private void copyLevel(ObjectNode merged, String key) {
        JsonNode v = merged.get(key);
        if (v == null || !v.isContainerNode()) {
            return;
        }
        budget.nodes(v.size());
        if (v.isObject()) {
            merged.putObject(key).setAll((ObjectNode) v);
        } else {
            merged.putArray(key).addAll((ArrayNode) v);
        }
    }

    private String type(JsonNode s) {
        JsonNode t = s.get("type");
        if (t != null && t.isTextual()) {
            return t.asText();
        }
        if (t != null && t.isArray() && !t.isEmpty()) {
            // a nullable type (["string", "null"]) mostly takes its non-null type, as a model fills a field it can
            List<String> kinds = new ArrayList<>();
            t.forEach(k -> {
                if (!k.asText().equals("null")) {
                    kinds.add(k.asText());
                }
            });
            return kinds.isEmpty() ? "null" : kinds.get(below(kinds.size()));
        }
        if (s.has("properties") || s.has("required") || s.has("additionalProperties")) {
            return "object";
        }
        if (s.has("items") || s.has("prefixItems")) {
            return "array";
        }
        if (s.has("minimum") || s.has("maximum") || s.has("multipleOf")) {
            return "number";
        }
        return "string";
    }

    private void object(JsonNode s, StringBuilder out, int depth) {
        JsonNode props = s.path("properties");
        Set<String> required = new HashSet<>();
        budget.nodes(s.path("required").size() + props.size());
        s.path("required").forEach(r -> required.add(r.asText()));
        int min = bounded(s, "minProperties");
        int max = upper(s, "maxProperties");
        List<String> keys = new ArrayList<>();
        List<String> optional = new ArrayList<>();
        for (Iterator<String> it = props.fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (required.contains(k)) {
                keys.add(k);
            } else if (depth < MAX_DEPTH && keys.size() + optional.size() < max && rng.nextLong() < 0) {
                optional.add(k);
            } else if (keys.size() + optional.size() < min) {
                optional.add(k);
            }
        }
        // required names without a property schema still need a value (any)
        for (String r : required) {
            if (!props.has(r)) {
                keys.add(r);
            }
        }
        keys.addAll(optional);
        if (keys.size() > max) {
            throw new IllegalArgumentException("maxProperties " + max + " is below the " + required.size() + " required properties");
        }
        JsonNode extra = s.get("additionalProperties");
        List<String> extraKeys = new ArrayList<>();
        if (keys.size() < min) {
            if (extra != null && extra.isBoolean() && !extra.asBoolean()) {
                throw new IllegalArgumentException("minProperties " + min + " needs more properties than the schema allows");
            }
            while (keys.size() + extraKeys.size() < min) {
                String k = word() + "_" + (keys.size() + extraKeys.size());
                extraKeys.add(k);
            }
        }
        put(out, "{");
        boolean first = true;
        for (String k : keys) {
            first = key(out, k, first);
            value(props.has(k) ? props.get(k) : null, out, depth + 1);
        }
        for (String k : extraKeys) {
            first = key(out, k, first);
            if (extra == null || extra.isBoolean()) {
                quote(word(), out);
            } else {
                value(extra, out, depth + 1);
            }
        }
        put(out, "}");
    }

    /** A minimum ({@code minItems}, {@code minLength}, {@code minProperties}): 0 when absent, at most {@link #MAX_MINIMUM}. */
    private static int bounded(JsonNode s, String keyword) {
        JsonNode v = s.path(keyword);
        if (v.asDouble(0) > MAX_MINIMUM) {
            throw new IllegalArgumentException(keyword + " " + v + " is more than the mock generates (" + MAX_MINIMUM + ")");
        }
        return Math.max(0, v.asInt(0));
    }

    /** A maximum ({@code maxItems}, {@code maxLength}, {@code maxProperties}): unbounded when absent or past an int. */
    private static int upper(JsonNode s, String keyword) {
        JsonNode v = s.get(keyword);
        return v == null || v.asDouble(Integer.MAX_VALUE) >= Integer.MAX_VALUE ? Integer.MAX_VALUE : v.asInt();
    }

    private boolean key(StringBuilder out, String k, boolean first) {
        if (!first) {
            put(out, ", ");
        }
        quote(k, out);
        put(out, ": ");
        return false;
    }

    private void array(JsonNode s, StringBuilder out, int depth) {
        JsonNode prefix = s.path("prefixItems");
        JsonNode items = s.get("items");
        int min = Math.max(bounded(s, "minItems"), prefix.size());
        int max = upper(s, "maxItems");
        if (items != null && items.isBoolean() && !items.asBoolean()) {
            max = Math.min(max, prefix.size());
        }
        if (min > max) {
            throw new IllegalArgumentException("minItems " + min + " exceeds maxItems " + max);
        }
        int upper = depth >= MAX_DEPTH ? min : (int) Math.min(max, (long) Math.max(min, 1) + SPARE_ITEMS - 1);
        int n = min + below(upper - min + 1);
        JsonNode contains = s.get("contains");
        boolean unique = s.path("uniqueItems").asBoolean(false);
        Set<String> seen = new HashSet<>();
        put(out, "[");
        for (int i = 0; i < n; i++) {
            JsonNode itemSchema = i < prefix.size() ? prefix.get(i) : i == prefix.size() && contains != null ? contains : items;
            int before = out.length();
            if (i > 0) {
                put(out, ", ");
            }
            int itemStart = out.length();
            boolean drawn = false;
            for (int attempt = 0; attempt < 32 && !drawn; attempt++) {
                if (unique) {
                    drawUnique(itemSchema, out, depth + 1);
                } else {
                    value(itemSchema == null || itemSchema.isBoolean() ? null : itemSchema, out, depth + 1);
                }
                drawn = !unique || seen.add(out.substring(itemStart));
                if (!drawn) {
                    out.setLength(itemStart); // a duplicate: drawn again in its place
                }
            }
            reached(out);
            if (!drawn) {
                out.setLength(before);
                if (i >= min) {
                    break; // the items allow fewer distinct values than drawn; stop at what is unique
                }
                throw new IllegalArgumentException("uniqueItems: the item schema has fewer than minItems " + min + " distinct values");
            }
        }
        put(out, "]");
    }

    /**
     * An item of a uniqueItems array, drawn whole whatever the reach: whether it is kept (or drawn again) depends on all
     * of it, and a value cut inside an item that the whole draw drops would not be a prefix of the whole value.
     */
    private void drawUnique(JsonNode itemSchema, StringBuilder out, int depth) {
        long saved = reach;
        reach = Long.MAX_VALUE;
        try {
            value(itemSchema == null || itemSchema.isBoolean() ? null : itemSchema, out, depth);
        } finally {
            reach = saved;
        }
    }

    private void string(JsonNode s, StringBuilder out) {
        int min = bounded(s, "minLength");
        int max = upper(s, "maxLength");
        if (min > max) {
            throw new IllegalArgumentException("minLength " + min + " exceeds maxLength " + max);
        }
        String text;
        if (s.has("pattern")) {
            String pattern = s.get("pattern").asText();
            RegexSampler.Compiled compiled = patterns.get(pattern);
            if (compiled == null) {
                compiled = RegexSampler.compile(pattern, budget);
                patterns.put(pattern, compiled);
            }
            text = compiled.sample(rng, min, max, budget);
        } else if (s.has("format") && formatted(s.get("format").asText()) != null) {
            text = formatted(s.get("format").asText());
        } else {
            StringBuilder b = new StringBuilder(word());
            int target = Math.max(min, 1 + below(3));
            for (int w = 1; w < target && b.length() < Math.min(max, 24); w++) {
                b.append(' ').append(word());
            }
            while (b.length() < min) {
                b.append(b.length() % 6 == 5 ? ' ' : 'a');
            }
            text = b.length() > max ? b.substring(0, max).stripTrailing() : b.toString();
            while (text.length() < min) {
                text = text + "a";
            }
        }
        quote(text, out);
    }

    /** A value of a well-known string format, or null for a format left unchecked (written as plain text). */
    private String formatted(String format) {
        return switch (format) {
            case "date-time" -> String.format("20%02d-%02d-%02dT%02d:%02d:%02dZ", 20 + below(10), 1 + below(12), 1 + below(28),
                    below(24), below(60), below(60));
            case "date" -> String.format("20%02d-%02d-%02d", 20 + below(10), 1 + below(12), 1 + below(28));
            case "time" -> String.format("%02d:%02d:%02dZ", below(24), below(60), below(60));
            case "email" -> word() + "@" + word() + ".example.com";
            case "uri", "url", "iri" -> "https://" + word() + ".example.com/" + word();
            case "hostname", "idn-hostname" -> word() + "." + word() + ".example.com";
            case "uuid" -> uuid();
            case "ipv4" -> below(256) + "." + below(256) + "." + below(256) + "." + below(256);
            case "ipv6" -> String.format("2001:db8::%x:%x", below(65536), below(65536));
            default -> null;
        };
    }

    private String uuid() {
        long hi = rng.nextLong();
        long lo = rng.nextLong();
        // version 4, variant 10xx
        return new java.util.UUID((hi & ~0xF000L) | 0x4000L, (lo & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L).toString();
    }

    private void integer(JsonNode s, StringBuilder out) {
        BigDecimal[] range = range(s, true);
        long lo;
        long hi;
        try {
            lo = range[0].setScale(0, RoundingMode.CEILING).longValueExact();
            hi = range[1].setScale(0, RoundingMode.FLOOR).longValueExact();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("integer bounds " + range[0] + ".." + range[1] + " lie beyond 64 bits, which "
                    + "the mock's integers keep within");
        }
        BigDecimal step = multipleOf(s);
        if (step != null) {
            BigDecimal first = new BigDecimal(lo).divide(step, 0, RoundingMode.CEILING);
            BigDecimal last = new BigDecimal(hi).divide(step, 0, RoundingMode.FLOOR);
            long count = count(first, last);
            if (count < 1) {
                throw new IllegalArgumentException("no integer multiple of " + step + " lies within the bounds");
            }
            BigDecimal v = first.add(BigDecimal.valueOf(below(count))).multiply(step);
            put(out, v.stripTrailingZeros().toPlainString());
            return;
        }
        if (lo > hi) {
            throw new IllegalArgumentException("no integer lies within the bounds " + range[0] + ".." + range[1]);
        }
        put(out, Long.toString(lo + below(hi - lo + 1)));
    }

    private void number(JsonNode s, StringBuilder out) {
        BigDecimal step = multipleOf(s);
        if (step != null) {
            BigDecimal[] range = range(s, false);
            BigDecimal first = range[0].divide(step, 0, RoundingMode.CEILING);
            BigDecimal last = range[1].divide(step, 0, RoundingMode.FLOOR);
            long count = count(first, last);
            if (count < 1) {
                throw new IllegalArgumentException("no multiple of " + step + " lies within the bounds");
            }
            put(out, first.add(BigDecimal.valueOf(below(count))).multiply(step).stripTrailingZeros().toPlainString());
            return;
        }
        BigDecimal[] range = range(s, false);
        // two decimals, strictly inside exclusive bounds: draw hundredths in the closed interval the bounds leave
        BigDecimal lo = range[0].setScale(2, RoundingMode.CEILING);
        BigDecimal hi = range[1].setScale(2, RoundingMode.FLOOR);
        long steps = hi.subtract(lo).movePointRight(2).longValueExact();
        if (steps < 0) {
            throw new IllegalArgumentException("no number with two decimals lies within the bounds " + range[0] + ".." + range[1]);
        }
        BigDecimal v = lo.add(BigDecimal.valueOf(below(steps + 1)).movePointLeft(2));
        String text = v.stripTrailingZeros().toPlainString();
        put(out, text.contains(".") ? text : text + ".0"); // Python writes a float with its point
    }

    /** Multiples drawn from at most: a range of more is drawn from its first this many. */
    private static final long MAX_MULTIPLES = 1_000_000_000_000_000L;
    /** Values are drawn within this distance of the bound nearest 0 (or of 0): any value within the bounds is valid. */
    private static final BigDecimal WINDOW = BigDecimal.valueOf(1_000_000_000_000_000L);

    /** {@code multipleOf} when it is a positive number, else null. */
    private static BigDecimal multipleOf(JsonNode s) {
        BigDecimal m = bound(s, "multipleOf");
        return m != null && m.signum() > 0 ? m : null;
    }

    /** How many multiples lie from {@code first} to {@code last} (multiples counted in steps), at most {@link #MAX_MULTIPLES}. */
    private static long count(BigDecimal first, BigDecimal last) {
        BigDecimal n = last.subtract(first).add(BigDecimal.ONE);
        return n.compareTo(BigDecimal.valueOf(MAX_MULTIPLES)) > 0 ? MAX_MULTIPLES : n.longValue();
    }

    /** A numeric keyword's value, or null; a refusal for one that is not a finite number (JSON's 1e999). */
    private static BigDecimal bound(JsonNode s, String keyword) {
        JsonNode v = s.get(keyword);
        if (v == null || !v.isNumber()) {
            return null;
        }
        if (v.isFloatingPointNumber() && !Double.isFinite(v.doubleValue())) {
            throw new IllegalArgumentException(keyword + " " + v.asText() + " is not a finite number");
        }
        return v.decimalValue();
    }

    /**
     * The closed bounds a value may take: minimum/maximum, narrowed past exclusive bounds (2020-12 numbers or
     * draft-4 booleans) by 1 for integers and by a hundredth for numbers; 0..100 where the schema leaves a side open;
     * then within {@link #WINDOW} of the bound nearest 0 (or of 0), so that every count drawn fits 64 bits.
     */
    private static BigDecimal[] range(JsonNode s, boolean integral) {
        BigDecimal step = integral ? BigDecimal.ONE : new BigDecimal("0.01");
        BigDecimal lo = bound(s, "minimum");
        BigDecimal hi = bound(s, "maximum");
        if (lo != null && s.path("exclusiveMinimum").asBoolean(false) && s.get("exclusiveMinimum").isBoolean()) {
            lo = lo.add(step);
        }
        BigDecimal exclusiveMin = bound(s, "exclusiveMinimum");
        if (exclusiveMin != null) {
            lo = lo == null ? exclusiveMin.add(step) : lo.max(exclusiveMin.add(step));
        }
        if (hi != null && s.path("exclusiveMaximum").asBoolean(false) && s.get("exclusiveMaximum").isBoolean()) {
            hi = hi.subtract(step);
        }
        BigDecimal exclusiveMax = bound(s, "exclusiveMaximum");
        if (exclusiveMax != null) {
            hi = hi == null ? exclusiveMax.subtract(step) : hi.min(exclusiveMax.subtract(step));
        }
        if (lo == null) {
            lo = hi == null ? BigDecimal.ZERO : hi.subtract(BigDecimal.valueOf(100));
        }
        if (hi == null) {
            hi = lo.add(BigDecimal.valueOf(100));
        }
        if (lo.compareTo(hi) <= 0) {
            BigDecimal centre = lo.signum() > 0 ? lo : hi.signum() < 0 ? hi : BigDecimal.ZERO;
            lo = lo.max(centre.subtract(WINDOW));
            hi = hi.min(centre.add(WINDOW));
        }
        return new BigDecimal[] {lo, hi};
    }

    private void anyObject(StringBuilder out) {
        int n = 1 + below(3);
        put(out, "{");
        for (int i = 0; i < n; i++) {
            key(out, word() + "_" + i, i == 0);
            switch (below(3)) {
                case 0 -> quote(word() + " " + word(), out);
                case 1 -> put(out, Integer.toString(below(1000)));
                default -> put(out, rng.nextLong() < 0 ? "true" : "false");
            }
        }
        put(out, "}");
    }

    /** A value given by the schema (const, enum), written in the same style, each node counted. */
    private void literal(JsonNode v, StringBuilder out) {
        budget.node();
        if (v.isTextual()) {
            quote(v.asText(), out);
        } else if (v.isArray()) {
            put(out, "[");
            for (int i = 0; i < v.size(); i++) {
                if (i > 0) {
                    put(out, ", ");
                }
                literal(v.get(i), out);
            }
            put(out, "]");
        } else if (v.isObject()) {
            put(out, "{");
            boolean first = true;
            for (Iterator<Map.Entry<String, JsonNode>> it = v.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> f = it.next();
                first = key(out, f.getKey(), first);
                literal(f.getValue(), out);
            }
            put(out, "}");
        } else {
            put(out, v.toString());
        }
    }

    /** Appends {@code s} as a JSON string, counted against the budget; only as much as the reply can reach. */
    private void quote(String s, StringBuilder out) {
        int before = out.length();
        long room = reach - before;
        boolean cut = s.length() > room; // then the opening quote and the first room characters pass the reach
        String part = cut ? s.substring(0, (int) Math.min(s.length(), room)) : s;
        budget.chars(part.length() + 2L); // before the copy: a string past the budget is never copied
        out.append('"');
        JsonStringEncoder.getInstance().quoteAsString(part, out);
        if (cut) {
            throw Reached.INSTANCE;
        }
        out.append('"');
        budget.chars(out.length() - before - (part.length() + 2L)); // the escapes
        reached(out);
    }

    /** Appends text of the value, counted against the budget. */
    private void put(StringBuilder out, String text) {
        budget.chars(text.length());
        out.append(text);
        reached(out);
    }

    /** Ends the draw once the value is longer than the reply can reach. */
    private void reached(StringBuilder out) {
        if (out.length() > reach) {
            throw Reached.INSTANCE;
        }
    }

    /** The value has grown past what the reply can reach: the draw stops there, its text so far is the answer. */
    private static final class Reached extends RuntimeException {
        static final Reached INSTANCE = new Reached();

        private Reached() {
            super(null, null, false, false);
        }
    }

    /** A lorem word without its leading space. */
    private String word() {
        String piece = words.pieces[below(words.pieces.length - 1)]; // the last piece is the full stop
        return piece.strip();
    }

    private int below(int bound) {
        return (int) below((long) bound);
    }

    private long below(long bound) {
        return bound <= 1 ? 0 : Math.floorMod(rng.nextLong(), bound);
    }
}
