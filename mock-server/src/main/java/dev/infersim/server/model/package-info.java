/**
 * One served model ({@link dev.infersim.server.model.ModelService}): its engines, clock, tokenizer, metrics and
 * settings, the choices made for a request ({@link dev.infersim.server.model.Choices}), the {@code infersim} truth of a
 * response ({@link dev.infersim.server.model.ResponseTruth}), sleep mode and the token-id requests running. What every
 * API shares; knows no wire format and no route.
 */
package dev.infersim.server.model;
