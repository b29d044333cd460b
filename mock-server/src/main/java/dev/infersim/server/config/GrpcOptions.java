package dev.infersim.server.config;

import dev.infersim.server.http.ConnectionGuard;
import dev.infersim.server.http.StrictRequestDecoder;

/**
 * Where a server answers vLLM's gRPC engine service ({@code serve --grpc-port}): on the HTTP port itself, as
 * llm-d-inference-sim serves it (HTTP/2 cleartext beside HTTP/1.1), or on a port of its own.
 *
 * <p>On the HTTP port, Vert.x sets up a connection's HTTP/1.1 handling only once its first request has arrived (it must
 * first tell an HTTP/2 preface from an HTTP/1.1 request), so that request is decoded before infersim's
 * {@link StrictRequestDecoder} and {@link ConnectionGuard} take over: the strict framing checks and the header timeout
 * apply from a connection's second request on, and an HTTP/1.1 client that offers a cleartext HTTP/2 upgrade on its
 * first request (Java's HttpClient does by default) is upgraded. A port of its own leaves the HTTP port exactly as
 * without gRPC.
 *
 * @param onHttpPort serve gRPC on the HTTP port ({@code --grpc-port http})
 * @param port       the gRPC port when not on the HTTP port: replica i of a fleet on port + i; 0 any free port
 */
public record GrpcOptions(boolean onHttpPort, int port) {
    public static final GrpcOptions ON_HTTP_PORT = new GrpcOptions(true, 0);

    public GrpcOptions {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--grpc-port must be in 0..65535 or 'http', got " + port);
        }
    }

    /** {@code --grpc-port}'s value: {@code http}, or a port number. */
    public static GrpcOptions parse(String value) {
        if (value.equalsIgnoreCase("http")) {
            return ON_HTTP_PORT;
        }
        try {
            return new GrpcOptions(false, Integer.parseInt(value.trim()));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--grpc-port must be a port number or 'http', got '" + value + "'");
        }
    }

    /** The same for replica {@code index} of a fleet: its own port after the first replica's. */
    GrpcOptions forReplica(int index) {
        return onHttpPort || port == 0 ? this : new GrpcOptions(false, port + index);
    }
}
