"""What a viewer is shown: pages of statuses with everything rendering needs
beside them, and which notifications they may see now."""
