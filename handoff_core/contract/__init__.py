"""The contract's formats, text in and values out; nothing here touches the file system."""
