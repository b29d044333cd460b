"""The seeds' "mock vLLM trick" (FastAPI + asyncio sleeps): a streaming OpenAI chat endpoint whose first token comes
after TTFT and each next one ITL later, with no engine model. The baseline that `infersim serve --timing fixed` is
compared with in this folder's benchmark.

Run: /usr/bin/python3 fastapi_mock.py PORT [TTFT_MS ITL_MS]   (Debian's python3-fastapi and python3-uvicorn)
"""
import asyncio
import json
import sys
import time

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

TTFT_S = float(sys.argv[2]) / 1e3 if len(sys.argv) > 2 else 0.1
ITL_S = float(sys.argv[3]) / 1e3 if len(sys.argv) > 3 else 0.05
MODEL = "mock"

app = FastAPI()


@app.get("/v1/models")
async def models():
    return {"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "mock"}]}


def chunk(request_id, created, delta, finish=None):
    body = {"id": request_id, "object": "chat.completion.chunk", "created": created, "model": MODEL,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return "data: " + json.dumps(body) + "\n\n"


@app.post("/v1/chat/completions")
async def chat_completions(request: Request):
    body = await request.json()
    tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or 16)
    prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
    usage = (body.get("stream_options") or {}).get("include_usage", False)
    request_id = "chatcmpl-%d" % time.monotonic_ns()
    created = int(time.time())

    async def stream():
        await asyncio.sleep(TTFT_S)
        for i in range(tokens):
            if i > 0:
                await asyncio.sleep(ITL_S)
            delta = {"role": "assistant", "content": " tok"} if i == 0 else {"content": " tok"}
            yield chunk(request_id, created, delta, "length" if i == tokens - 1 else None)
        if usage:
            yield "data: " + json.dumps({"id": request_id, "object": "chat.completion.chunk", "created": created,
                                         "model": MODEL, "choices": [],
                                         "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": tokens,
                                                   "total_tokens": prompt_tokens + tokens}}) + "\n\n"
        yield "data: [DONE]\n\n"

    if not body.get("stream"):
        return JSONResponse({"error": {"message": "this mock streams only", "code": 400}}, status_code=400)
    return StreamingResponse(stream(), media_type="text/event-stream")


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning", access_log=False)
