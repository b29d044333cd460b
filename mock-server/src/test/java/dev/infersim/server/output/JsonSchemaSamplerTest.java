package dev.infersim.server.output;

import com.fasterxml.jackson.databind.JsonNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SchemaValidatorsConfig;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import dev.infersim.server.json.Json;
import dev.infersim.server.text.LoremVocabulary;
import dev.infersim.server.text.PromptTokenizer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every value the sampler draws validates against its schema (networknt's draft 2020-12 validator, formats asserted). */
public class JsonSchemaSamplerTest {
    private static final LoremVocabulary WORDS = new LoremVocabulary(new PromptTokenizer());
    private static final JsonSchemaFactory FACTORY = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012);
    private static final SchemaValidatorsConfig CONFIG = SchemaValidatorsConfig.builder().formatAssertionsEnabled(true).build();

    public static Set<ValidationMessage> validate(String schema, String value) throws Exception {
        JsonSchema s = FACTORY.getSchema(Json.MAPPER.readTree(schema), CONFIG);
        return s.validate(Json.MAPPER.readTree(value));
    }

    private static void validFor200Seeds(String schema) throws Exception {
        JsonNode node = Json.MAPPER.readTree(schema);
        Set<String> distinct = new HashSet<>();
        for (long seed = 0; seed < 200; seed++) {
            String value = JsonSchemaSampler.sample(node, seed, WORDS);
            Set<ValidationMessage> errors = validate(schema, value);
            assertTrue(errors.isEmpty(), () -> value + " -> " + errors);
            distinct.add(value);
        }
        assertTrue(distinct.size() > 1 || schema.contains("const"), "the seed changes the value: " + distinct);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"},\"unit\":{\"type\":\"string\",\"enum\":[\"celsius\",\"fahrenheit\"]}},\"required\":[\"city\"]}",
        "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"minimum\":3,\"exclusiveMaximum\":7},\"x\":{\"type\":\"number\",\"exclusiveMinimum\":0.5,\"maximum\":0.6}},\"required\":[\"n\",\"x\"],\"additionalProperties\":false}",
        "{\"type\":\"object\",\"properties\":{\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"minLength\":2,\"maxLength\":5},\"minItems\":2,\"maxItems\":4,\"uniqueItems\":true}},\"required\":[\"tags\"]}",
        "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"object\",\"properties\":{\"b\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"c\":{\"type\":\"boolean\"},\"d\":{\"type\":\"null\"}},\"required\":[\"c\",\"d\"]}}},\"required\":[\"b\"]}},\"required\":[\"a\"]}",
        "{\"type\":\"object\",\"properties\":{\"when\":{\"type\":\"string\",\"format\":\"date-time\"},\"day\":{\"type\":\"string\",\"format\":\"date\"},\"mail\":{\"type\":\"string\",\"format\":\"email\"},\"id\":{\"type\":\"string\",\"format\":\"uuid\"},\"ip\":{\"type\":\"string\",\"format\":\"ipv4\"},\"site\":{\"type\":\"string\",\"format\":\"uri\"}},\"required\":[\"when\",\"day\",\"mail\",\"id\",\"ip\",\"site\"]}",
        "{\"type\":\"object\",\"properties\":{\"code\":{\"type\":\"string\",\"pattern\":\"^[A-Z]{3}-\\\\d{2,4}$\"},\"alt\":{\"type\":\"string\",\"pattern\":\"^(red|green|blue)(?:-[a-f0-9]+)?$\"}},\"required\":[\"code\",\"alt\"]}",
        "{\"type\":\"object\",\"properties\":{\"v\":{\"type\":[\"integer\",\"null\"],\"multipleOf\":5,\"minimum\":-20,\"maximum\":20},\"w\":{\"type\":\"number\",\"multipleOf\":0.25,\"minimum\":1,\"maximum\":2}},\"required\":[\"v\",\"w\"]}",
        "{\"$defs\":{\"node\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},\"children\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/node\"}}},\"required\":[\"name\"]}},\"$ref\":\"#/$defs/node\"}",
        "{\"type\":\"object\",\"properties\":{\"pick\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\",\"minimum\":10}]},\"k\":{\"const\":\"fixed\"},\"both\":{\"allOf\":[{\"type\":\"object\",\"properties\":{\"p\":{\"type\":\"integer\"}},\"required\":[\"p\"]},{\"properties\":{\"q\":{\"type\":\"string\"}},\"required\":[\"q\"]}]}},\"required\":[\"pick\",\"k\",\"both\"]}",
        "{\"type\":\"object\",\"minProperties\":3,\"additionalProperties\":{\"type\":\"integer\",\"minimum\":0}}",
        "{\"type\":\"array\",\"prefixItems\":[{\"type\":\"string\"},{\"type\":\"integer\"}],\"items\":false}",
        "{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"contains\":{\"const\":7},\"minItems\":1}"
    })
    void drawnValuesValidateAgainstTheirSchema(String schema) throws Exception {
        validFor200Seeds(schema);
    }

    @Test
    void aSeedGivesTheSameValueAndTheTextIsPythonJsonDumpsStyle() throws Exception {
        JsonNode schema = Json.MAPPER.readTree("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"minItems\":2}},\"required\":[\"a\",\"b\"]}");
        String one = JsonSchemaSampler.sample(schema, 42, WORDS);
        assertEquals(one, JsonSchemaSampler.sample(schema, 42, WORDS));
        assertNotEquals(one, JsonSchemaSampler.sample(schema, 43, WORDS));
        assertTrue(one.matches("\\{\"a\": -?\\d+, \"b\": \\[-?\\d+(, -?\\d+)+]}"), one);
    }

    @Test
    void jsonObjectModeGivesAnObject() throws Exception {
        for (long seed = 0; seed < 50; seed++) {
            assertTrue(Json.MAPPER.readTree(JsonSchemaSampler.sampleObject(seed, WORDS)).isObject());
        }
    }

    @Test
    void unsatisfiableOrUnreadableSchemasAreRefusedByName() {
        assertThrows(IllegalArgumentException.class, () -> JsonSchemaSampler.sample(Json.MAPPER.readTree(
                "{\"type\":\"string\",\"pattern\":\"(?=a)b\"}"), 1, WORDS));
        assertThrows(IllegalArgumentException.class, () -> JsonSchemaSampler.sample(Json.MAPPER.readTree(
                "{\"$ref\":\"https://example.com/schema\"}"), 1, WORDS));
        assertThrows(IllegalArgumentException.class, () -> JsonSchemaSampler.sample(Json.MAPPER.readTree(
                "{\"type\":\"integer\",\"minimum\":5,\"maximum\":4}"), 1, WORDS));
        assertThrows(IllegalArgumentException.class, () -> JsonSchemaSampler.sample(Json.MAPPER.readTree(
                "{\"type\":\"array\",\"minItems\":100000}"), 1, WORDS));
        IllegalArgumentException loop = assertThrows(IllegalArgumentException.class, () -> JsonSchemaSampler.sample(
                Json.MAPPER.readTree("{\"type\":\"object\",\"properties\":{\"x\":{\"$ref\":\"#\"}},\"required\":[\"x\"]}"), 1, WORDS));
        assertTrue(loop.getMessage().contains("recurses"), loop.getMessage());
    }

    /** Schemas of the hostile-body corpus: a few hundred bytes asking for millions of values or characters. */
    private static final String[] EXPLOSIVE = {
        doubling(20),
        "{\"type\":\"array\",\"minItems\":4096,\"items\":{\"type\":\"array\",\"minItems\":4096,\"items\":{\"type\":\"integer\"}}}",
        "{\"type\":\"object\",\"minProperties\":4096,\"additionalProperties\":{\"type\":\"object\",\"minProperties\":4096}}",
        "{\"type\":\"array\",\"minItems\":4096,\"items\":{\"type\":\"string\",\"minLength\":4096}}",
        "{\"type\":\"object\",\"required\":[" + "\"p\",".repeat(0) + String.join(",", java.util.stream.IntStream.range(0, 100_000)
                .mapToObj(i -> "\"p" + i + "\"").toList()) + "]}",
        "{\"type\":\"string\",\"pattern\":\"((((a{4096}){4096}){4096}){4096})\"}",
        "{\"type\":\"string\",\"pattern\":\"((((){4096}){4096}){4096}){4096}x\"}",
    };

    /** $refs doubling at each of {@code levels} levels: 2^levels leaves. */
    static String doubling(int levels) {
        StringBuilder defs = new StringBuilder();
        for (int i = 0; i < levels; i++) {
            String next = "{\"$ref\":\"#/$defs/l" + (i + 1) + "\"}";
            defs.append("\"l").append(i).append("\":{\"type\":\"object\",\"properties\":{\"a\":").append(next).append(",\"b\":")
                    .append(next).append("},\"required\":[\"a\",\"b\"]},");
        }
        defs.append("\"l").append(levels).append("\":{\"type\":\"string\",\"minLength\":8}");
        return "{\"$ref\":\"#/$defs/l0\",\"$defs\":{" + defs + "}}";
    }

    @Test
    void anExplosiveSchemaIsRefusedWithinTheRequestsBudgetNamingTheLimit() throws Exception {
        for (String schema : EXPLOSIVE) {
            JsonNode node = Json.MAPPER.readTree(schema);
            SamplingBudget budget = new SamplingBudget();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> JsonSchemaSampler.sample(node, 1, WORDS, budget, Long.MAX_VALUE), schema);
            assertTrue(e.getMessage().contains("262,144 characters") || e.getMessage().contains("250,000 schema and pattern nodes"),
                    e.getMessage());
            // the work done stops at the limit: no more than the budget (and one string) was drawn
            assertTrue(budget.charsDrawn() <= SamplingBudget.MAX_CHARS + 4096 + 2, budget.charsDrawn() + " characters");
            assertTrue(budget.nodesVisited() <= SamplingBudget.MAX_NODES + 1, budget.nodesVisited() + " nodes");
        }
    }

    @Test
    void theBudgetIsTheRequestsAllItsChoicesTogether() throws Exception {
        JsonNode schema = Json.MAPPER.readTree("{\"type\":\"string\",\"minLength\":4000,\"maxLength\":4000}");
        SamplingBudget budget = new SamplingBudget();
        int choices = 0;
        try {
            while (choices < 10_000) {
                JsonSchemaSampler.sample(schema, choices, WORDS, budget, Long.MAX_VALUE);
                choices++;
            }
        } catch (IllegalArgumentException e) {
            assertTrue(e.getMessage().contains("all its choices"), e.getMessage());
        }
        assertEquals(SamplingBudget.MAX_CHARS / 4002, choices, "choices of 4,002 characters until the budget is spent");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{\"type\":\"object\",\"properties\":{\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"minLength\":2,\"maxLength\":5},\"minItems\":2,\"maxItems\":40,\"uniqueItems\":true}},\"required\":[\"tags\"]}",
        "{\"type\":\"array\",\"minItems\":300,\"items\":{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"},\"s\":{\"type\":\"string\",\"pattern\":\"[a-z]{5,30}\"}},\"required\":[\"n\",\"s\"]}}",
        "{\"type\":\"array\",\"minItems\":200,\"uniqueItems\":true,\"items\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":300}}",
        "{\"const\":{\"a\":[1,2,3],\"b\":\"a rather long constant string that a cut may fall inside of\"}}",
    })
    void aValueIsDrawnOnlyAsFarAsTheReplyReachesAndIsThePrefixOfTheWholeValue(String schema) throws Exception {
        JsonNode node = Json.MAPPER.readTree(schema);
        for (long seed = 0; seed < 50; seed++) {
            String whole = JsonSchemaSampler.sample(node, seed, WORDS);
            for (int reach : new int[] {1, 17, 64, 500}) {
                String cut = JsonSchemaSampler.sample(node, seed, WORDS, new SamplingBudget(), reach);
                assertTrue(whole.startsWith(cut), "seed " + seed + ", reach " + reach + ": " + cut + " is not a prefix of " + whole);
                assertTrue(cut.length() > reach || cut.equals(whole), "drawn past the reach: " + cut);
            }
        }
    }

    @Test
    void aValueTheReplyCannotReachCostsWhatTheReplyReaches() throws Exception {
        SamplingBudget budget = new SamplingBudget();
        String cut = JsonSchemaSampler.sample(Json.MAPPER.readTree(doubling(20)), 1, WORDS, budget, 3000);
        assertTrue(cut.length() > 3000 && cut.length() < 3100, cut.length() + " characters");
        assertTrue(budget.nodesVisited() < 2000, budget.nodesVisited() + " nodes");
    }

    @Test
    void numbersBeyondWhatADrawNeedsAreDrawnNearZeroOrRefusedInOurWords() throws Exception {
        String[] valid = {
            "{\"type\":\"integer\",\"minimum\":-1e300,\"maximum\":1e300}",
            "{\"type\":\"number\",\"minimum\":-1e300,\"maximum\":1e300}",
            "{\"type\":\"number\",\"minimum\":1e300,\"maximum\":1.0000000001e300}",
            "{\"type\":\"integer\",\"multipleOf\":7,\"minimum\":-1e300,\"maximum\":1e300}",
            "{\"type\":\"number\",\"multipleOf\":1e-300,\"minimum\":0,\"maximum\":1}",
        };
        for (String schema : valid) {
            validFor200Seeds(schema);
        }
        for (String schema : new String[] {"{\"type\":\"number\",\"minimum\":1e999}", "{\"type\":\"integer\",\"minimum\":1e300}"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> JsonSchemaSampler.sample(Json.MAPPER.readTree(schema), 1, WORDS), schema);
            assertTrue(e.getMessage().startsWith("minimum") || e.getMessage().startsWith("integer bounds"), e.getMessage());
        }
    }
}
