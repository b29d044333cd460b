/** infersim engine. */
package dev.infersim.engine;
