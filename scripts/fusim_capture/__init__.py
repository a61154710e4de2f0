"""Turning torch nn.Modules into fusim layer traces (traces/SCHEMA.md) with torch.fx."""
