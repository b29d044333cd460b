package dev.infersim.server.routes;

import com.google.protobuf.Message;
import com.google.protobuf.MessageLite;
import dev.infersim.server.config.KvTransferConfig;
import dev.infersim.server.grpc.AbortRequest;
import dev.infersim.server.grpc.AbortResponse;
import dev.infersim.server.grpc.EmbedRequest;
import dev.infersim.server.grpc.GenerateRequest;
import dev.infersim.server.grpc.GetLoadsRequest;
import dev.infersim.server.grpc.GetLoadsResponse;
import dev.infersim.server.grpc.GetModelInfoRequest;
import dev.infersim.server.grpc.GetModelInfoResponse;
import dev.infersim.server.grpc.GetServerInfoRequest;
import dev.infersim.server.grpc.GetServerInfoResponse;
import dev.infersim.server.grpc.HealthCheckRequest;
import dev.infersim.server.grpc.HealthCheckResponse;
import dev.infersim.server.grpc.SchedulerLoad;
import dev.infersim.server.grpc.VllmEngineProto;
import dev.infersim.server.model.ModelService;
import dev.infersim.server.observe.ServerMetrics;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.grpc.common.GrpcMessageDecoder;
import io.vertx.grpc.common.GrpcMessageEncoder;
import io.vertx.grpc.common.GrpcStatus;
import io.vertx.grpc.common.ServiceMethod;
import io.vertx.grpc.common.ServiceName;
import io.vertx.grpc.reflection.ReflectionService;
import io.vertx.grpc.server.GrpcServer;
import io.vertx.grpc.server.GrpcServerRequest;
import io.vertx.grpc.server.GrpcServerResponse;
import io.vertx.grpc.server.Service;

import java.time.Instant;

/**
 * vLLM's gRPC engine service, {@code vllm.grpc.engine.VllmEngine} ({@code python -m vllm.entrypoints.grpc_server}, its
 * servicer {@code smg_grpc_servicer/vllm/servicer.py} at {@code smg-project/smg@f8daa88}; the messages in
 * {@code src/main/protobuf/vllm_engine.proto}), with gRPC server reflection (v1), served by Vert.x's gRPC server on the
 * HTTP port (HTTP/2 cleartext with prior knowledge, as gRPC clients connect) and, with {@code --grpc-port}, on a port of
 * its own. {@code Generate} and {@code Embed} run on the engine like any request ({@link GrpcGenerate}); the rest answer
 * from the server's state:
 * <ul>
 *   <li>{@code HealthCheck}: healthy once the model has loaded and until shutdown; the message vLLM's servicer sends,
 *       "Health", or why not;</li>
 *   <li>{@code Abort}: aborts the running Generate requests of the ids given (their outputs finish with
 *       {@code abort});</li>
 *   <li>{@code GetModelInfo}, {@code GetServerInfo}: what vLLM reports from its model and parallel config;</li>
 *   <li>{@code GetLoads}: one {@code SchedulerLoad} per data-parallel engine (vLLM reports one for rank 0), running and
 *       waiting requests and KV-cache usage as of the engine's last step.</li>
 * </ul>
 * The API key, the cold start and shutdown apply as on HTTP: UNAUTHENTICATED without {@code authorization: Bearer KEY}
 * metadata, UNAVAILABLE while loading or closing (HealthCheck always answers).
 */
public final class VllmGrpcService {
    public static final ServiceName NAME = ServiceName.create("vllm.grpc.engine", "VllmEngine");
    /** The server type vLLM's servicer reports. */
    static final String SERVER_TYPE = "vllm-grpc";

    private final ModelService service;
    private final HttpBasics.Shutdown shutdown;
    private final GrpcGenerate generate;

    VllmGrpcService(ModelService service, HttpBasics.Shutdown shutdown) {
        this.service = service;
        this.shutdown = shutdown;
        this.generate = new GrpcGenerate(service);
    }

    /** Whether {@code request} is a gRPC call (HTTP/2, content type {@code application/grpc...}). */
    static boolean isGrpc(HttpServerRequest request) {
        String type = request.getHeader("content-type");
        return type != null && type.startsWith("application/grpc");
    }

    /** A gRPC server with this service and reflection bound, for one event loop's HTTP server. */
    GrpcServer server(Vertx vertx) {
        Service engine = Service.service(NAME, VllmEngineProto.getDescriptor().findServiceByName("VllmEngine"))
                .bind(method("Generate", GenerateRequest.getDefaultInstance()), guarded(generate::generate))
                .bind(method("Embed", EmbedRequest.getDefaultInstance()), guarded(generate::embed))
                .bind(method("HealthCheck", HealthCheckRequest.getDefaultInstance()), this::healthCheck)
                .bind(method("Abort", AbortRequest.getDefaultInstance()), guarded(this::abort))
                .bind(method("GetModelInfo", GetModelInfoRequest.getDefaultInstance()), guarded(this::modelInfo))
                .bind(method("GetServerInfo", GetServerInfoRequest.getDefaultInstance()), guarded(this::serverInfo))
                .bind(method("GetLoads", GetLoadsRequest.getDefaultInstance()), guarded(this::loads))
                .build();
        return GrpcServer.server(vertx).addService(engine).addService(ReflectionService.v1());
    }

    private static <Req extends Message, Resp extends MessageLite> ServiceMethod<Req, Resp> method(String name, Req type) {
        return ServiceMethod.server(NAME, name, GrpcMessageEncoder.encoder(), GrpcMessageDecoder.decoder(type));
    }

    /** {@code handler}, after the API key, loading and shutdown checks every call but HealthCheck passes. */
    private <Req, Resp> Handler<GrpcServerRequest<Req, Resp>> guarded(Handler<GrpcServerRequest<Req, Resp>> handler) {
        return call -> {
            String key = service.options.apiKey();
            if (key != null && !("Bearer " + key).equals(call.headers().get("authorization"))) {
                fail(call.response(), GrpcStatus.UNAUTHENTICATED, "missing or wrong API key (send authorization: Bearer KEY)");
            } else if (shutdown.closing()) {
                fail(call.response(), GrpcStatus.UNAVAILABLE, "The server is shutting down");
            } else if (!service.loaded) {
                fail(call.response(), GrpcStatus.UNAVAILABLE, "The model is still loading");
            } else {
                handler.handle(call);
            }
        };
    }

    static void fail(GrpcServerResponse<?, ?> response, GrpcStatus status, String message) {
        response.status(status).statusMessage(message).end();
    }

    private void healthCheck(GrpcServerRequest<HealthCheckRequest, HealthCheckResponse> call) {
        call.last().onSuccess(in -> {
            String why = shutdown.closing() ? "The server is shutting down" : !service.loaded ? "The model is still loading"
                    : service.sleepMode.level() >= 0 ? "The engine is asleep (sleep level " + service.sleepMode.level() + ")" : null;
            call.response().end(HealthCheckResponse.newBuilder().setHealthy(why == null).setMessage(why == null ? "Health" : why)
                    .build());
        });
    }

    private void abort(GrpcServerRequest<AbortRequest, AbortResponse> call) {
        call.last().onSuccess(in -> {
            for (String id : in.getRequestIdsList()) {
                service.tokenRequests.abort(id);
            }
            call.response().end(AbortResponse.getDefaultInstance());
        });
    }

    private void modelInfo(GrpcServerRequest<GetModelInfoRequest, GetModelInfoResponse> call) {
        call.last().onSuccess(in -> {
            var model = service.options.deployment().model();
            String path = model.hfId() == null ? model.name() : model.hfId();
            int maxLen = service.capacity.maxModelLen();
            call.response().end(GetModelInfoResponse.newBuilder().setModelPath(path)
                    .setIsGeneration(!service.options.features().pooling()).setMaxContextLength(maxLen)
                    .setVocabSize(model.vocabSize()).setSupportsVision(model.vision() != null)
                    .setServedModelName(service.options.servedModelName()).setTokenizerPath(path).setMaxReqInputLen(maxLen)
                    .build());
        });
    }

    private void serverInfo(GrpcServerRequest<GetServerInfoRequest, GetServerInfoResponse> call) {
        call.last().onSuccess(in -> {
            GetServerInfoResponse.Builder info = GetServerInfoResponse.newBuilder()
                    .setActiveRequests(service.activeExchanges.get()).setIsPaused(service.sleepMode.isSleeping())
                    .setLastReceiveTimestamp(service.tokenRequests.lastReceivedEpochSeconds())
                    .setUptimeSeconds(service.tokenRequests.uptimeSeconds()).setServerType(SERVER_TYPE)
                    .setDataParallelSize(service.loops.size());
            if (service.kvConnector != null) {
                info.setKvConnector(KvTransferConfig.CONNECTOR).setKvRole(service.kvConnector.config().kvRole())
                        .setKvEngineId(service.kvConnector.engineId(0));
            }
            call.response().end(info.build());
        });
    }

    private void loads(GrpcServerRequest<GetLoadsRequest, GetLoadsResponse> call) {
        call.last().onSuccess(in -> {
            GetLoadsResponse.Builder out = GetLoadsResponse.newBuilder().setTimestamp(Instant.now().toString())
                    .setVersion(AdminRoutes.VLLM_VERSION);
            int maxSeqs = service.options.deployment().maxNumSeqs();
            long capacityTokens = service.capacity.tokens();
            for (int rank = 0; rank < service.metrics.size(); rank++) {
                if (in.hasDpRank() && in.getDpRank() != rank) {
                    continue;
                }
                ServerMetrics m = service.metrics.get(rank);
                double usage = m.kvUsage();
                out.addLoads(SchedulerLoad.newBuilder().setDpRank(rank).setNumRunningReqs(m.running())
                        .setNumWaitingReqs(m.waiting()).setNumTotalReqs(m.running() + m.waiting())
                        .setNumUsedTokens((int) Math.round(usage * capacityTokens))
                        .setMaxTotalNumTokens((int) Math.min(Integer.MAX_VALUE, capacityTokens)).setTokenUsage(usage)
                        .setMaxRunningRequests(maxSeqs));
            }
            call.response().end(out.setDpRankCount(out.getLoadsCount()).build());
        });
    }
}
