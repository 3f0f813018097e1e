"""Go side of the bot: reading evolved Go policies, generating llm-d-router plugins, and checking them with the pinned toolchain."""
