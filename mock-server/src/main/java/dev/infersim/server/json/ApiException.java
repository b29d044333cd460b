package dev.infersim.server.json;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A request the server refuses, carried to the HTTP layer and written as OpenAI/vLLM error JSON:
 * {@code {"error":{"message","type","param","code"}}} with {@code code} the HTTP status, as vLLM's ErrorResponse.
 */
public final class ApiException extends RuntimeException {
    public final int status;
    public final String param;

    public ApiException(int status, String message, String param) {
        super(message, null, false, false);
        this.status = status;
        this.param = param;
    }

    public static ApiException badRequest(String param, String message) {
        return new ApiException(400, message, param);
    }

    /** vLLM's error type names by status. */
    public static String typeOf(int status) {
        return switch (status) {
            case 400, 414, 431 -> "BadRequestError";
            case 401 -> "AuthenticationError";
            case 404 -> "NotFoundError";
            case 405 -> "MethodNotAllowedError";
            case 409 -> "ConflictError";
            case 413 -> "RequestEntityTooLargeError";
            case 429 -> "RateLimitError";
            case 503 -> "ServiceUnavailableError";
            default -> "InternalServerError";
        };
    }

    /** OpenAI/vLLM error JSON: {@code {"error":{"message","type","param","code"}}}. */
    public static String errorJson(int status, String message, String param) {
        return errorJson(status, message, param, ApiException.typeOf(status));
    }

    public static String errorJson(int status, String message, String param, String type) {
        ObjectNode body = Json.MAPPER.createObjectNode();
        ObjectNode error = body.putObject("error").put("message", message).put("type", type);
        if (param == null) {
            error.putNull("param");
        } else {
            error.put("param", param);
        }
        error.put("code", status);
        return body.toString();
    }
}
