package dev.infersim.server;

import dev.infersim.server.fleet.MockServer;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** A plain socket HTTP/1.1 client: lets a test hold a stream open, read part of it, and hang up mid-stream. */
final class RawHttp implements AutoCloseable {
    private final Socket socket;
    private final BufferedReader in;

    private RawHttp(Socket socket) throws IOException {
        this.socket = socket;
        socket.setSoTimeout(20_000);
        this.in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
    }

    /** Sends a POST with a JSON body and returns without reading the response. */
    static RawHttp post(MockServer server, String path, String body, String... headers) throws IOException {
        RawHttp h = new RawHttp(new Socket("127.0.0.1", server.port()));
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        StringBuilder req = new StringBuilder("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: " + bytes.length + "\r\n");
        for (int i = 0; i < headers.length; i += 2) {
            req.append(headers[i]).append(": ").append(headers[i + 1]).append("\r\n");
        }
        OutputStream out = h.socket.getOutputStream();
        out.write(req.append("\r\n").toString().getBytes(StandardCharsets.UTF_8));
        out.write(bytes);
        out.flush();
        return h;
    }

    /** Reads lines until one starts with {@code prefix}; returns it, or null at end of stream. */
    String readUntil(String prefix) throws IOException {
        String line;
        while ((line = in.readLine()) != null) {
            if (line.startsWith(prefix)) {
                return line;
            }
        }
        return null;
    }

    /** Reads to the end of the connection (or of a complete chunked body), returning every line. */
    String readAll() throws IOException {
        StringBuilder b = new StringBuilder();
        String line;
        try {
            while ((line = in.readLine()) != null) {
                b.append(line).append('\n');
                if (line.equals("0")) {
                    break;
                }
            }
        } catch (java.net.SocketException e) {
            b.append("<connection reset>\n");
        }
        return b.toString();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
