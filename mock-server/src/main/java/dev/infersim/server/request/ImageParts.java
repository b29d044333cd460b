package dev.infersim.server.request;

import com.fasterxml.jackson.databind.JsonNode;
import dev.infersim.engine.profile.VisionEncoder;
import dev.infersim.server.json.ApiException;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.Locale;
import javax.imageio.ImageIO;
import javax.imageio.ImageReader;
import javax.imageio.stream.ImageInputStream;

/**
 * The image content parts of a chat message ({@code {"type": "image_url", "image_url": {"url": ...}}}, OpenAI's and
 * vLLM's), sized and turned into the prompt tokens the model's {@link VisionEncoder} makes of them: the image's size is
 * read from a data URL's header ({@code data:image/png;base64,...}: PNG, JPEG, GIF, BMP, by the JDK's ImageIO
 * readers, which read the header only), never decoded in full. A remote URL ({@code http(s)://}) is not fetched: it
 * counts as a {@value #REMOTE_SIDE} x {@value #REMOTE_SIDE} image, since the mock cannot know its size without the
 * network and a gateway test needs the request to go through. A model without a vision encoder refuses image parts
 * with a 400 naming the model, as vLLM refuses multimodal input to a text-only model.
 */
public final class ImageParts {
    /** The side of the square a remote image counts as. */
    static final int REMOTE_SIDE = 1024;

    private ImageParts() {
    }

    /** One image of a message: its placeholder token ids in the prompt, and an identity for render's mm_hashes. */
    public record Image(int[] ids, String hash) {
    }

    /**
     * The image of a content part, sized for {@code vision}; a 400 naming {@code where} when the model has no vision
     * encoder, the part is malformed, or its image cannot be sized.
     */
    public static Image read(JsonNode part, VisionEncoder vision, String model, String where) {
        if (vision == null) {
            throw ApiException.badRequest("messages", where + ": the model " + model + " has no vision encoder, so it takes "
                    + "no image parts (serve a multimodal model, such as --model qwen2-vl-7b)");
        }
        JsonNode image = part.get("image_url");
        JsonNode url = image == null ? null : image.isTextual() ? image : image.get("url");
        if (url == null || !url.isTextual() || url.asText().isEmpty()) {
            throw ApiException.badRequest("messages", where + ".image_url: expected {\"url\": \"data:image/...;base64,...\" "
                    + "or an http(s) URL}");
        }
        String u = url.asText();
        int width;
        int height;
        String hash;
        if (u.startsWith("data:")) {
            byte[] bytes = dataUrlBytes(u, where);
            int[] size = size(bytes, where);
            width = size[0];
            height = size[1];
            hash = sha256(bytes);
        } else if (u.startsWith("http://") || u.startsWith("https://")) {
            width = REMOTE_SIDE;
            height = REMOTE_SIDE;
            hash = sha256(u.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        } else {
            throw ApiException.badRequest("messages", where + ".image_url.url: expected a data URL or an http(s) URL");
        }
        int tokens;
        try {
            tokens = vision.imageTokens(width, height);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("messages", where + ": the " + width + " x " + height + " image cannot be "
                    + "processed: " + e.getMessage());
        }
        int[] ids = new int[tokens + 2];
        Arrays.fill(ids, vision.imageTokenId());
        ids[0] = vision.visionStartTokenId();
        ids[ids.length - 1] = vision.visionEndTokenId();
        return new Image(ids, hash);
    }

    private static byte[] dataUrlBytes(String url, String where) {
        int comma = url.indexOf(',');
        String meta = comma < 0 ? "" : url.substring(5, comma).toLowerCase(Locale.ROOT);
        if (comma < 0 || !meta.startsWith("image/") || !meta.endsWith(";base64")) {
            throw ApiException.badRequest("messages", where + ".image_url.url: a data URL must be data:image/<type>;base64,...");
        }
        try {
            return Base64.getDecoder().decode(url.substring(comma + 1).replaceAll("\\s", ""));
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("messages", where + ".image_url.url: the data URL's base64 is malformed");
        }
    }

    /** Width and height from the image's header, by whichever ImageIO reader knows its format. */
    static int[] size(byte[] bytes, String where) {
        try (ImageInputStream in = ImageIO.createImageInputStream(new ByteArrayInputStream(bytes))) {
            Iterator<ImageReader> readers = in == null ? null : ImageIO.getImageReaders(in);
            if (readers == null || !readers.hasNext()) {
                throw ApiException.badRequest("messages", where + ": the image's format is not one infersim sizes (PNG, "
                        + "JPEG, GIF, BMP)");
            }
            ImageReader reader = readers.next();
            try {
                reader.setInput(in, true, true);
                return new int[] {reader.getWidth(0), reader.getHeight(0)};
            } finally {
                reader.dispose();
            }
        } catch (IOException | RuntimeException e) {
            if (e instanceof ApiException api) {
                throw api;
            }
            throw ApiException.badRequest("messages", where + ": the image's header cannot be read (" + e.getMessage() + ")");
        }
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }
}
