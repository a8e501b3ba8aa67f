"""Memory in the frameworks agents are built with, each over a `MemorySession` and each
behind its own extra, so the base install stays small:

- `metis_memory.integrations.pydantic_ai` (`pip install metis-memory[pydantic-ai]`): the
  `MetisMemory` capability, the three memory tools and the memory in the instructions.
- `metis_memory.integrations.openai_agents` (`[openai-agents]`): tools and an
  instructions callable for the OpenAI Agents SDK.
- `metis_memory.integrations.anthropic` (`[anthropic]`): `MetisMemoryTool`, Claude's
  memory tool (`memory_20250818`) over the two files.

Every memory rule stays in the component: an integration decides only what its framework
makes its own (where a model response ends, the order of one response's tool calls, where
an update reaches the model, how a refusal comes back). docs/integrations.md says how."""
