package dev.infersim.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HPAScalingPolicy;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HPAScalingRules;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscalerBehavior;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.openshift.api.model.monitoring.v1.PodMonitor;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * deploy/kubernetes checked without a cluster: every kustomization rendered by kustomize (kubectl's), every object
 * parsed strictly (fabric8's typed model where it has one, a shape written from the API's Go types for the KEDA and
 * Gateway API Inference Extension resources), the references between them lined up (selectors, ports, probes, names),
 * the autoscalers' numbers those of the README's {@code simulate --autoscaler hpa} prediction, and every container
 * command line one that infersim's own picocli parser accepts. Skipped where kubectl is missing, required where
 * INFERSIM_REQUIRE_KUBECTL=1 (as .ci/run sets).
 */
class DeployManifestsTest {
    private static final Path DEPLOY = Path.of("").toAbsolutePath().getParent().resolve("deploy/kubernetes");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final Pattern ENV_REFERENCE = Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)");

    private static final Object META = ObjectMeta.class;
    /** Written from {@code kubernetes-sigs/gateway-api-inference-extension@v1.5.0} ({@code df9f8909f}): api/v1, apix/v1alpha2. */
    private static final Object INFERENCE_POOL = object("apiVersion!", "string", "kind!", "string", "metadata!", META,
            "spec!", object("selector!", object("matchLabels!", "string-map"), "targetPorts!", List.of(object("number!", "int")),
                    "appProtocol", Set.of("http", "kubernetes.io/h2c"), "endpointPickerRef!", object(
                    "group", "string", "kind", "string", "name!", "string", "port", object("number!", "int"),
                    "failureMode", Set.of("FailOpen", "FailClose"))));
    private static final Object POOL_REF = object("group", "string", "kind", "string", "name!", "string");
    private static final Object INFERENCE_OBJECTIVE = object("apiVersion!", "string", "kind!", "string", "metadata!", META,
            "spec!", object("priority", "int", "poolRef!", POOL_REF));
    private static final Object INFERENCE_MODEL_REWRITE = object("apiVersion!", "string", "kind!", "string", "metadata!", META,
            "spec!", object("poolRef!", POOL_REF, "rules!", List.of(object(
                    "matches", List.of(object("model", object("type", Set.of("Exact"), "value!", "string"))),
                    "targets", List.of(object("modelRewrite!", "string", "weight!", "int"))))));
    private static final Object SCALED_OBJECT = object("apiVersion!", "string", "kind!", "string", "metadata!", META,
            "spec!", object("scaleTargetRef!", object("name!", "string", "kind", "string", "apiVersion", "string",
                            "envSourceContainerName", "string"),
                    "pollingInterval", "int", "cooldownPeriod", "int", "initialCooldownPeriod", "int",
                    "idleReplicaCount", "int", "minReplicaCount", "int", "maxReplicaCount", "int",
                    "fallback", object("failureThreshold!", "int", "replicas!", "int"),
                    "advanced", object("restoreToOriginalReplicaCount", "bool", "horizontalPodAutoscalerConfig",
                            object("name", "string", "behavior", HorizontalPodAutoscalerBehavior.class)),
                    "triggers!", List.of(object("type!", "string", "name", "string", "metadata!", "string-map",
                            "authenticationRef", object("name!", "string", "kind", "string"),
                            "metricType", Set.of("AverageValue", "Value", "Utilization"), "useCachedMetrics", "bool"))));
    /** The Prometheus Adapter's rule config (its config.yaml), from the adapter's config types. */
    private static final Object ADAPTER_CONFIG = object("rules!", List.of(object("seriesQuery!", "string",
            "seriesFilters", List.of(object("is", "string", "isNot", "string")),
            "resources", object("overrides", object("*", object("group", "string", "resource!", "string")),
                    "template", "string"),
            "name", object("matches!", "string", "as", "string"), "metricsQuery!", "string")));

    private static Rendered fleet;

    @BeforeAll
    static void renderTheFleet() throws Exception {
        assumeTrue(kubectlAvailable(), "kubectl is not installed: the Kubernetes manifests are not checked");
        fleet = Rendered.of("mock-fleet");
    }

    @Test
    void theMockFleetsProbesPortsLabelsAndScrapingLineUp() {
        Deployment deployment = fleet.one(Deployment.class);
        PodTemplateSpec pod = deployment.getSpec().getTemplate();
        Map<String, String> labels = pod.getMetadata().getLabels();
        assertSubset(deployment.getSpec().getSelector().getMatchLabels(), labels, "the Deployment's selector");
        Container server = only(pod.getSpec().getContainers());
        CommandLine.ParseResult serve = fleet.parse(server, pod.getSpec()).subcommand();
        assertEquals("serve", serve.commandSpec().name());
        int port = Integer.parseInt(option(serve, "--port", "8000"));
        assertEquals("0.0.0.0", option(serve, "--host", "127.0.0.1"), "a pod serves beyond its loopback");
        ContainerPort http = port(server, "http");
        assertEquals(port, http.getContainerPort());

        double coldStartS = Double.parseDouble(option(serve, "--startup-delay", "0"))
                / Double.parseDouble(option(serve, "--time-scale", "1"));
        Probe startup = server.getStartupProbe();
        checkHealthProbe(startup, server, "startup");
        checkHealthProbe(server.getReadinessProbe(), server, "readiness");
        int budget = orZero(startup.getInitialDelaySeconds()) + startup.getPeriodSeconds() * startup.getFailureThreshold();
        assertTrue(budget >= 2 * coldStartS, "the startup probe allows " + budget + " s for a " + coldStartS
                + " s cold start: a slow node would restart pods forever");
        long graceMs = Long.parseLong(option(serve, "--shutdown-grace-ms", "5000"));
        assertTrue(pod.getSpec().getTerminationGracePeriodSeconds() * 1000 > graceMs,
                "the pod outlives the server's drain");

        Map<String, String> annotations = pod.getMetadata().getAnnotations();
        assertEquals("true", annotations.get("prometheus.io/scrape"));
        assertEquals(String.valueOf(port), annotations.get("prometheus.io/port"));
        assertEquals("/metrics", annotations.get("prometheus.io/path"));

        Service service = fleet.one(Service.class);
        assertSubset(service.getSpec().getSelector(), labels, "the Service's selector");
        ServicePort servicePort = only(service.getSpec().getPorts());
        assertEquals("http", servicePort.getTargetPort().getStrVal());

        PodMonitor monitor = fleet.one(PodMonitor.class);
        assertSubset(monitor.getSpec().getSelector().getMatchLabels(), labels, "the PodMonitor's selector");
        var endpoint = only(monitor.getSpec().getPodMetricsEndpoints());
        assertEquals("http", endpoint.getPort());
        assertEquals("/metrics", endpoint.getPath());
    }

    @Test
    void theHpaAndKedaScaleTheFleetWithTheNumbersOfTheSimulatorsPrediction() throws Exception {
        Rendered hpaDir = Rendered.of("autoscaling/hpa");
        HorizontalPodAutoscaler hpa = hpaDir.one(HorizontalPodAutoscaler.class);
        Deployment deployment = fleet.one(Deployment.class);
        assertEquals("Deployment", hpa.getSpec().getScaleTargetRef().getKind());
        assertEquals(deployment.getMetadata().getName(), hpa.getSpec().getScaleTargetRef().getName());
        var metric = only(hpa.getSpec().getMetrics());
        assertEquals("Pods", metric.getType());
        assertEquals("AverageValue", metric.getPods().getTarget().getType());
        String target = metric.getPods().getTarget().getAverageValue().toString();

        JsonNode rules = YAML.readTree(hpaDir.one(ConfigMap.class).getData().get("config.yaml"));
        StrictShape.check(rules, ADAPTER_CONFIG, "prometheus-adapter config.yaml");
        JsonNode rule = rules.get("rules").get(0);
        assertTrue(Pattern.compile(rule.get("name").get("matches").asText()).matcher("vllm:num_requests_waiting").find());
        assertEquals(metric.getPods().getMetric().getName(), rule.get("name").get("as").asText(),
                "the HPA asks for the metric under the name the adapter serves it");
        assertTrue(rule.get("seriesQuery").asText().startsWith("vllm:num_requests_waiting{"));

        // The README's prediction: simulate --autoscaler hpa with these very numbers, accepted by the simulator.
        List<String> simulate = new ArrayList<>(List.of("simulate", "--autoscaler", "hpa", "--autoscale-metric",
                "num_requests_waiting", "--autoscale-target", target, "--min-replicas",
                String.valueOf(hpa.getSpec().getMinReplicas()), "--max-replicas",
                String.valueOf(hpa.getSpec().getMaxReplicas())));
        HorizontalPodAutoscalerBehavior behavior = hpa.getSpec().getBehavior();
        simulate.addAll(rules("up", behavior.getScaleUp()));
        simulate.addAll(rules("down", behavior.getScaleDown()));
        CommandLine.ParseResult parsed = new CommandLine(new Main()).parseArgs(simulate.toArray(String[]::new));
        assertEquals("simulate", parsed.subcommand().commandSpec().name());
        String readme = Files.readString(DEPLOY.resolve("README.md")).replaceAll("\\\\\\n\\s*", "");
        assertTrue(readme.contains(String.join(" ", simulate.subList(1, simulate.size()))),
                "deploy/kubernetes/README.md shows the prediction: infersim " + String.join(" ", simulate));

        Rendered keda = Rendered.of("autoscaling/keda");
        JsonNode scaled = keda.custom("keda.sh/v1alpha1", "ScaledObject", SCALED_OBJECT);
        JsonNode spec = scaled.get("spec");
        assertEquals(deployment.getMetadata().getName(), spec.get("scaleTargetRef").get("name").asText());
        assertEquals(hpa.getSpec().getMinReplicas(), spec.get("minReplicaCount").asInt());
        assertEquals(hpa.getSpec().getMaxReplicas(), spec.get("maxReplicaCount").asInt());
        assertEquals(behavior, StrictShape.typed(spec.get("advanced").get("horizontalPodAutoscalerConfig")
                .get("behavior"), HorizontalPodAutoscalerBehavior.class, "behavior"), "KEDA scales as the HPA does");
        JsonNode trigger = only(spec.get("triggers"));
        assertEquals("prometheus", trigger.get("type").asText());
        assertEquals(target, trigger.get("metadata").get("threshold").asText());
        assertTrue(trigger.get("metadata").get("query").asText().contains("vllm:num_requests_waiting{"));
    }

    @Test
    void theInferencePoolV1SelectsTheMockPodsAndItsObjectivesAndRewritesPointAtIt() throws Exception {
        Rendered gateway = Rendered.of("gateway");
        JsonNode pool = gateway.custom("inference.networking.k8s.io/v1", "InferencePool", INFERENCE_POOL);
        JsonNode objective = gateway.custom("inference.networking.x-k8s.io/v1alpha2", "InferenceObjective", INFERENCE_OBJECTIVE);
        JsonNode rewrite = gateway.custom("inference.networking.x-k8s.io/v1alpha2", "InferenceModelRewrite",
                INFERENCE_MODEL_REWRITE);
        PodTemplateSpec pod = fleet.one(Deployment.class).getSpec().getTemplate();
        Map<String, String> selector = YAML.convertValue(pool.get("spec").get("selector").get("matchLabels"), Map.class);
        assertSubset(selector, pod.getMetadata().getLabels(), "the InferencePool's selector");
        Container server = only(pod.getSpec().getContainers());
        assertEquals(port(server, "http").getContainerPort(), only(pool.get("spec").get("targetPorts")).get("number").asInt());
        String poolName = pool.get("metadata").get("name").asText();
        for (JsonNode ref : List.of(objective.get("spec").get("poolRef"), rewrite.get("spec").get("poolRef"))) {
            assertEquals(poolName, ref.get("name").asText());
            assertEquals("inference.networking.k8s.io", ref.get("group").asText());
            assertEquals("InferencePool", ref.get("kind").asText());
        }
        CommandLine.ParseResult serve = fleet.parse(server, pod.getSpec()).subcommand();
        Set<String> served = new java.util.HashSet<>(Set.of(option(serve, "--served-model-name", option(serve, "--model",
                "llama-3.1-8b"))));
        CommandLine.Model.OptionSpec adapters = serve.matchedOption("--lora-modules");
        if (adapters != null) {
            assertTrue(serve.hasMatchedOption("--enable-lora"), "--lora-modules needs --enable-lora");
            adapters.stringValues().forEach(m -> served.add(dev.infersim.server.config.LoraModule.parse(m).name()));
        }
        for (JsonNode rule : rewrite.get("spec").get("rules")) {
            for (JsonNode target : rule.get("targets")) {
                assertTrue(served.contains(target.get("modelRewrite").asText()), "the gateway rewrites to "
                        + target.get("modelRewrite") + ", which the mock serves: " + served);
            }
        }
    }

    @Test
    void theBenchJobRunsOneShardPerIndexAgainstTheServiceAndMergesThemAll() throws Exception {
        Rendered bench = Rendered.of("bench-job");
        Job shards = bench.named(Job.class, "infersim-bench");
        assertEquals("Indexed", shards.getSpec().getCompletionMode());
        int n = shards.getSpec().getCompletions();
        assertEquals(n, shards.getSpec().getParallelism(), "every shard runs at once");
        PodSpec shardPod = shards.getSpec().getTemplate().getSpec();
        Container shard = only(shardPod.getContainers());
        CommandLine.ParseResult run = bench.parse(shard, shardPod).subcommand();
        assertEquals("bench", run.commandSpec().name());
        assertEquals("0/" + n, option(run, "--shard", ""), "pod I of the Indexed Job is shard I/N");
        assertTrue(run.hasMatchedOption("--start-at") && run.hasMatchedOption("--save-result"));
        URI target = URI.create(option(run, "--base-url", ""));
        Service service = fleet.one(Service.class);
        assertEquals(service.getMetadata().getName(), target.getHost());
        assertEquals(only(service.getSpec().getPorts()).getPort(), target.getPort());
        String resultDir = option(run, "--result-dir", ".");

        Job merge = bench.named(Job.class, "infersim-bench-merge");
        PodSpec mergePod = merge.getSpec().getTemplate().getSpec();
        CommandLine.ParseResult merged = bench.parse(only(mergePod.getContainers()), mergePod).subcommand();
        assertEquals("merge", merged.commandSpec().name());
        String pattern = shard.getArgs().get(shard.getArgs().indexOf("--result-filename") + 1);
        assertTrue(pattern.contains("$(SHARD)"), "each shard writes its own result: " + pattern);
        List<String> files = new ArrayList<>();
        List<String> logs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String name = pattern.replace("$(SHARD)", String.valueOf(i));
            files.add(resultDir + "/" + name);
            logs.add(resultDir + "/" + name.replaceFirst("\\.json$", ".hlog"));
        }
        assertEquals(files, merged.matchedPositional(0).stringValues(), "the merge takes every shard");
        String await = String.join(" ", only(mergePod.getInitContainers()).getCommand());
        logs.forEach(log -> assertTrue(await.contains(log), "the merge waits for " + log + ": " + await));
        Set<String> claims = Set.of(bench.one(PersistentVolumeClaim.class).getMetadata().getName());
        for (PodSpec pod : List.of(shardPod, mergePod)) {
            pod.getVolumes().forEach(v -> assertTrue(claims.contains(v.getPersistentVolumeClaim().getClaimName())));
        }
    }

    /** An option's value as written on the command line, or {@code otherwise} when the line does not give it. */
    private static String option(CommandLine.ParseResult command, String name, String otherwise) {
        CommandLine.Model.OptionSpec given = command.matchedOption(name);
        return given == null ? otherwise : given.stringValues().get(0);
    }

    private static List<String> rules(String direction, HPAScalingRules rules) {
        List<String> flags = new ArrayList<>(List.of("--scale-" + direction + "-window",
                String.valueOf(rules.getStabilizationWindowSeconds())));
        for (HPAScalingPolicy p : rules.getPolicies()) {
            flags.add("--scale-" + direction + "-policy");
            flags.add(p.getType().toLowerCase(java.util.Locale.ROOT) + "=" + p.getValue() + "/" + p.getPeriodSeconds());
        }
        flags.addAll(List.of("--scale-" + direction + "-select", rules.getSelectPolicy()));
        return flags;
    }

    private static void checkHealthProbe(Probe probe, Container container, String which) {
        assertTrue(probe != null, "a " + which + " probe");
        HTTPGetAction get = probe.getHttpGet();
        assertEquals("/health", get.getPath(), which + " probe path");
        String port = get.getPort().getStrVal();
        assertTrue(port != null ? container.getPorts().stream().anyMatch(p -> port.equals(p.getName()))
                : container.getPorts().stream().anyMatch(p -> p.getContainerPort().equals(get.getPort().getIntVal())),
                which + " probe port " + get.getPort() + " is a container port");
    }

    private static ContainerPort port(Container container, String name) {
        return container.getPorts().stream().filter(p -> name.equals(p.getName())).findFirst()
                .orElseThrow(() -> new AssertionError(container.getName() + " has no port named " + name));
    }

    private static void assertSubset(Map<String, String> selector, Map<String, String> labels, String what) {
        assertTrue(selector != null && !selector.isEmpty() && labels.entrySet().containsAll(selector.entrySet()),
                what + " " + selector + " selects the pods labelled " + labels);
    }

    private static int orZero(Integer value) {
        return value == null ? 0 : value;
    }

    private static <T> T only(List<T> items) {
        assertEquals(1, items.size(), "exactly one of " + items);
        return items.get(0);
    }

    private static JsonNode only(JsonNode items) {
        assertEquals(1, items.size(), "exactly one of " + items);
        return items.get(0);
    }

    private static Map<String, Object> object(Object... keysAndShapes) {
        Map<String, Object> shape = new LinkedHashMap<>();
        for (int i = 0; i < keysAndShapes.length; i += 2) {
            shape.put((String) keysAndShapes[i], keysAndShapes[i + 1]);
        }
        return shape;
    }

    private static boolean kubectlAvailable() {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "kubectl"))) {
                return true;
            }
        }
        if ("1".equals(System.getenv("INFERSIM_REQUIRE_KUBECTL"))) {
            throw new AssertionError("kubectl must be installed for this run (.ci/run installs kubernetes-client)");
        }
        return false;
    }

    /** One kustomization rendered by kubectl, every object parsed strictly. */
    private record Rendered(String dir, List<JsonNode> objects, Map<String, ConfigMap> configMaps) {

        static Rendered of(String dir) throws IOException, InterruptedException {
            Process kubectl = new ProcessBuilder("kubectl", "kustomize", DEPLOY.resolve(dir).toString())
                    .redirectErrorStream(true).start();
            byte[] out = kubectl.getInputStream().readAllBytes();
            assertTrue(kubectl.waitFor(60, TimeUnit.SECONDS) && kubectl.exitValue() == 0,
                    "kubectl kustomize " + dir + ": " + new String(out));
            List<JsonNode> objects = YAML.readerFor(JsonNode.class).<JsonNode>readValues(out).readAll();
            Map<String, ConfigMap> configMaps = new LinkedHashMap<>();
            for (JsonNode o : objects) {
                String where = dir + ": " + o.path("kind").asText() + "/" + o.path("metadata").path("name").asText();
                Class<?> type = typeOf(o.path("apiVersion").asText(), o.path("kind").asText());
                if (type != null) {
                    Object typed = StrictShape.typed(o, type, where);
                    if (typed instanceof ConfigMap c) {
                        configMaps.put(c.getMetadata().getName(), c);
                    }
                } else {
                    assertTrue(Set.of("keda.sh/v1alpha1 ScaledObject", "inference.networking.k8s.io/v1 InferencePool",
                                    "inference.networking.x-k8s.io/v1alpha2 InferenceObjective",
                                    "inference.networking.x-k8s.io/v1alpha2 InferenceModelRewrite")
                            .contains(o.path("apiVersion").asText() + " " + o.path("kind").asText()),
                            where + ": no typed model nor shape for " + o.path("apiVersion").asText());
                }
            }
            return new Rendered(dir, objects, configMaps);
        }

        private static Class<?> typeOf(String apiVersion, String kind) {
            return switch (apiVersion + " " + kind) {
                case "apps/v1 Deployment" -> Deployment.class;
                case "v1 Service" -> Service.class;
                case "v1 ConfigMap" -> ConfigMap.class;
                case "v1 PersistentVolumeClaim" -> PersistentVolumeClaim.class;
                case "batch/v1 Job" -> Job.class;
                case "autoscaling/v2 HorizontalPodAutoscaler" -> HorizontalPodAutoscaler.class;
                case "monitoring.coreos.com/v1 PodMonitor" -> PodMonitor.class;
                default -> null;
            };
        }

        <T> T one(Class<T> type) {
            List<T> found = all(type);
            assertEquals(1, found.size(), dir + ": one " + type.getSimpleName());
            return found.get(0);
        }

        <T> T named(Class<T> type, String name) {
            return all(type).stream().filter(o -> name.equals(((io.fabric8.kubernetes.api.model.HasMetadata) o)
                    .getMetadata().getName())).findFirst()
                    .orElseThrow(() -> new AssertionError(dir + ": no " + type.getSimpleName() + " " + name));
        }

        private <T> List<T> all(Class<T> type) {
            List<T> found = new ArrayList<>();
            for (JsonNode o : objects) {
                if (type.equals(typeOf(o.path("apiVersion").asText(), o.path("kind").asText()))) {
                    found.add(StrictShape.typed(o, type, dir));
                }
            }
            return found;
        }

        /** Every object of a custom kind, each checked against its shape; at least one. */
        List<JsonNode> customs(String apiVersion, String kind, Object shape) {
            List<JsonNode> found = objects.stream().filter(o -> apiVersion.equals(o.path("apiVersion").asText())
                    && kind.equals(o.path("kind").asText())).toList();
            assertTrue(!found.isEmpty(), dir + ": a " + kind);
            found.forEach(o -> StrictShape.check(o, shape, dir + ": " + kind));
            return found;
        }

        JsonNode custom(String apiVersion, String kind, Object shape) {
            List<JsonNode> found = objects.stream().filter(o -> apiVersion.equals(o.path("apiVersion").asText())
                    && kind.equals(o.path("kind").asText())).toList();
            assertEquals(1, found.size(), dir + ": one " + kind);
            StrictShape.check(found.get(0), shape, dir + ": " + kind);
            return found.get(0);
        }

        /**
         * The container's command line as infersim's parser reads it: the image's entrypoint is infersim, so the
         * arguments are the command's; $(VAR) references expanded as the kubelet does, from the container's env.
         */
        CommandLine.ParseResult parse(Container container, PodSpec pod) {
            assertTrue(container.getCommand() == null || container.getCommand().isEmpty(),
                    container.getName() + " keeps the image's infersim entrypoint");
            List<String> args = container.getArgs().stream().map(a -> substitute(container, pod, a)).toList();
            try {
                return new CommandLine(new Main()).parseArgs(args.toArray(String[]::new));
            } catch (CommandLine.ParameterException e) {
                throw new AssertionError(dir + ": container " + container.getName() + ": infersim " + args
                        + " does not parse: " + e.getMessage(), e);
            }
        }

        String substitute(Container container, PodSpec pod, String arg) {
            Matcher m = ENV_REFERENCE.matcher(arg);
            StringBuilder out = new StringBuilder();
            while (m.find()) {
                m.appendReplacement(out, Matcher.quoteReplacement(envValue(container, m.group(1))));
            }
            return m.appendTail(out).toString();
        }

        /**
         * A variable's value: a literal, a ConfigMap key (of this kustomization, else one the user creates per run,
         * as the shards' start instant: then a value of the kind it holds), or shard 0's completion index.
         */
        private String envValue(Container container, String name) {
            EnvVar env = container.getEnv().stream().filter(e -> e.getName().equals(name)).findFirst()
                    .orElseThrow(() -> new AssertionError(container.getName() + " refers to $(" + name
                            + "), which its env does not define"));
            if (env.getValue() != null) {
                return env.getValue();
            }
            var from = env.getValueFrom();
            if (from.getConfigMapKeyRef() != null) {
                ConfigMap map = configMaps.get(from.getConfigMapKeyRef().getName());
                if (map != null) {
                    assertTrue(map.getData().containsKey(from.getConfigMapKeyRef().getKey()), name + "'s key");
                    return map.getData().get(from.getConfigMapKeyRef().getKey());
                }
                assertEquals("start-at-epoch-ms", from.getConfigMapKeyRef().getKey(),
                        name + ": the only ConfigMap a user creates per run is the start instant");
                return String.valueOf(System.currentTimeMillis() + 60_000);
            }
            assertEquals("metadata.annotations['batch.kubernetes.io/job-completion-index']",
                    from.getFieldRef().getFieldPath());
            return "0";
        }
    }
}
